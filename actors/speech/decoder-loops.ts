// Moonshine, like other sequence-to-sequence recognisers, sometimes loops: it writes a phrase and
// at once the same phrase again ("and so my fellow Americans, and so my fellow Americans"), most
// often as a segment ends in noise, or a whole sentence again when another voice talks under the
// speaker ("I'm glad to see you again. I'm glad to see you again."). People repeat a word or two
// for emphasis ("no, no"), and a short sentence ("Yes. Yes."), but seldom three or more words at
// once within a sentence, or a sentence of four or more words word for word at once. So a phrase
// of three or more words followed by itself in the same sentence, and a whole sentence of four or
// more words followed by the same whole sentence, are taken for a loop and written once.
const MIN_LOOP_WORDS = 3;
const MIN_SENTENCE_LOOP_WORDS = 4;
const SENTENCE_END = /[.?!]$/;

/** `text` with each loop (a phrase that directly follows itself in a sentence, or a sentence that does) written once. */
export function withoutDecoderLoops(text: string): string {
  const tokens = text.split(/\s+/).filter(Boolean);
  const words = tokens.map(comparable);
  for (let loop = findLoop(tokens, words); loop; loop = findLoop(tokens, words)) {
    const { at, length } = loop;
    // A phrase keeps the punctuation its second copy ended with: it ends where the loop did. A
    // sentence keeps its own end (its copy may have been cut off before one).
    if (!endsSentence(tokens, at + length)) tokens[at + length - 1] = tokens[at + 2 * length - 1]!;
    tokens.splice(at + length, length);
    words.splice(at + length, length);
  }
  return tokens.join(' ');
}

/** The first (then longest) loop: words[at, at + length) repeated right after itself. */
function findLoop(tokens: string[], words: string[]): { at: number; length: number } | undefined {
  for (let at = 0; at < words.length; at++) {
    for (let length = Math.floor((words.length - at) / 2); length >= MIN_LOOP_WORDS; length--) {
      if (repeats(words, at, length) && (!endsSentence(tokens, at + length) || isSentenceLoop(tokens, at, length))) return { at, length };
    }
  }
  return undefined;
}

/**
 * Whether tokens[at, at + length) is a whole sentence of enough words, and so is its copy (which
 * may end the transcript unpunctuated: the segment ended on it).
 */
function isSentenceLoop(tokens: string[], at: number, length: number): boolean {
  const copyEnd = at + 2 * length;
  return length >= MIN_SENTENCE_LOOP_WORDS && (at === 0 || endsSentence(tokens, at)) && (copyEnd === tokens.length || endsSentence(tokens, copyEnd));
}

/** Whether the token before `end` ends a sentence. */
function endsSentence(tokens: string[], end: number): boolean {
  return SENTENCE_END.test(tokens[end - 1]!);
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
