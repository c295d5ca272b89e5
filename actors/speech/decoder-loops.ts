// Moonshine, like other sequence-to-sequence recognisers, sometimes loops: it writes a phrase and
// at once the same phrase again ("and so my fellow Americans, and so my fellow Americans"), most
// often as a segment ends in noise. People repeat a word or two for emphasis ("no, no"), or a
// whole sentence, but seldom three or more words at once within one, so a phrase of three or
// more words followed by itself in the same sentence is taken for a loop and written once.
const MIN_LOOP_WORDS = 3;
const SENTENCE_END = /[.?!]$/;

/** `text` with each phrase of three or more words that directly follows itself in a sentence written once. */
export function withoutDecoderLoops(text: string): string {
  const tokens = text.split(/\s+/).filter(Boolean);
  const words = tokens.map(comparable);
  for (let loop = findLoop(tokens, words); loop; loop = findLoop(tokens, words)) {
    const { at, length } = loop;
    // The phrase keeps the punctuation its second copy ended with: it ends where the loop did.
    tokens[at + length - 1] = tokens[at + 2 * length - 1]!;
    tokens.splice(at + length, length);
    words.splice(at + length, length);
  }
  return tokens.join(' ');
}

/** The first (then longest) phrase of words[at, at + length) repeated right after itself, not ending a sentence. */
function findLoop(tokens: string[], words: string[]): { at: number; length: number } | undefined {
  for (let at = 0; at < words.length; at++) {
    for (let length = Math.floor((words.length - at) / 2); length >= MIN_LOOP_WORDS; length--) {
      if (!SENTENCE_END.test(tokens[at + length - 1]!) && repeats(words, at, length)) return { at, length };
    }
  }
  return undefined;
}

function repeats(words: string[], at: number, length: number): boolean {
  for (let i = at; i < at + length; i++) {
    if (words[i] === '' || words[i] !== words[i + length]) return false;
  }
  return true;
}

/** A word as said: case and punctuation around it do not make it another. */
function comparable(token: string): string {
  return token.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '');
}
