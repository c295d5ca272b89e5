// Word error rate, the measure of every transcript check: word-level edit distance (substitutions,
// insertions, deletions) over the number of reference words, case and punctuation ignored.

export const words = (text: string) => text.toLowerCase().replace(/[^a-z0-9' ]+/g, ' ').split(/\s+/).filter(Boolean);

/** The edits that turn `reference` into `hypothesis`, and how many words the reference has. */
export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return { errors: previous[hyp.length]!, words: ref.length };
}

export function wordErrorRate(reference: string, hypothesis: string): number {
  const { errors, words } = wordErrors(reference, hypothesis);
  return errors / words;
}
