// vader-sentiment ships CommonJS without type declarations.
declare module 'vader-sentiment' {
  interface PolarityScores {
    pos: number;
    neu: number;
    neg: number;
    compound: number;
  }
  const vader: {
    SentimentIntensityAnalyzer: { polarity_scores(text: string): PolarityScores };
  };
  export default vader;
}
