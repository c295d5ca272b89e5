// VADER: a lexicon and rules tuned for short, spoken-style text; no model to load.
import vader from 'vader-sentiment';

export interface Sentiment {
  positive: number;
  neutral: number;
  negative: number;
  /** Overall polarity in -1..1. */
  compound: number;
}

export function scoreSentiment(text: string): Sentiment {
  const scores = vader.SentimentIntensityAnalyzer.polarity_scores(text);
  return { positive: scores.pos, neutral: scores.neu, negative: scores.neg, compound: scores.compound };
}
