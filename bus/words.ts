// Words of a transcript, counted the same way wherever a speaking rate is made: on the live
// speech rows, in the stored segments and so in the timelines.

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Runs of non-space characters holding at least one letter or digit ("don't", "1963", "well-known"); a lone "-" or "..." is none. */
export function countWords(text: string): number {
  let words = 0;
  for (const token of text.split(/\s+/)) if (LETTER_OR_DIGIT.test(token)) words++;
  return words;
}
