// Word error rate, the measure of every transcript check: word-level edit distance (substitutions,
// insertions, deletions) over the number of reference words, case and punctuation ignored, and
// titles compared as they are spoken (a transcriber writes "Mr." for what a transcript spells
// "mister"), as speech recognition scoring commonly normalises them.

const SPOKEN_TITLES = new Map([
  ['mr', 'mister'],
  ['mrs', 'missus'],
  ['dr', 'doctor'],
]);

export const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => SPOKEN_TITLES.get(word) ?? word);

/** The edits that turn `reference` into `hypothesis`, and how many words the reference has. */
export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const { ref, hyp, cost } = editCosts(reference, hypothesis);
  return { errors: cost[ref.length]![hyp.length]!, words: ref.length };
}

/** Both texts' words, and the fewest edits that turn the first i reference words into the first j hypothesis words. */
function editCosts(reference: string, hypothesis: string): { ref: string[]; hyp: string[]; cost: number[][] } {
  const ref = words(reference);
  const hyp = words(hypothesis);
  const cost = [Array.from({ length: hyp.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= ref.length; i++) {
    const row = [i];
    for (let j = 1; j <= hyp.length; j++) {
      row[j] = Math.min(cost[i - 1]![j]! + 1, row[j - 1]! + 1, cost[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
    cost.push(row);
  }
  return { ref, hyp, cost };
}

export function wordErrorRate(reference: string, hypothesis: string): number {
  const { errors, words } = wordErrors(reference, hypothesis);
  return errors / words;
}

/**
 * The edits of `wordErrors` charged to each reference word, along one cheapest alignment: a
 * substitution or deletion to its own word, an insertion to the reference word before it (the
 * first word for insertions before any). They add up to `wordErrors(...).errors`.
 */
export function errorsPerReferenceWord(reference: string, hypothesis: string): number[] {
  const { ref, hyp, cost } = editCosts(reference, hypothesis);
  const charged = new Array<number>(ref.length).fill(0);
  const charge = (i: number) => {
    if (ref.length > 0) charged[Math.max(0, i)]!++;
  };
  for (let i = ref.length, j = hyp.length; i > 0 || j > 0; ) {
    if (i > 0 && j > 0 && cost[i]![j] === cost[i - 1]![j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)) {
      if (ref[i - 1] !== hyp[j - 1]) charge(i - 1);
      i--;
      j--;
    } else if (i > 0 && cost[i]![j] === cost[i - 1]![j]! + 1) {
      charge(i - 1);
      i--;
    } else {
      charge(i - 1);
      j--;
    }
  }
  return charged;
}
