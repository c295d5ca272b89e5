// A phrase of three or more words the decoder wrote twice in a row within a sentence, and a whole
// sentence of four or more words it wrote twice in a row, are written once; everything else of
// the transcript stays as it was.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { withoutDecoderLoops } from '../../actors/speech/decoder-loops.ts';

const comparable = (text: string) => text.split(/\s+/).filter(Boolean).map((token) => token.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''));

/**
 * Whether a phrase of three or more words follows itself, not across the end of a sentence, or a
 * whole sentence of four or more words is followed by the same whole sentence.
 */
function hasLoop(tokens: string[]): boolean {
  const words = tokens.map((token) => comparable(token)[0] ?? '');
  const endsSentence = (end: number) => /[.?!]$/.test(tokens[end - 1]!);
  for (let at = 0; at < words.length; at++) {
    for (let length = 3; at + 2 * length <= words.length; length++) {
      const copyEnd = at + 2 * length;
      const wholeSentences = length >= 4 && (at === 0 || endsSentence(at)) && (copyEnd === tokens.length || endsSentence(copyEnd));
      if (endsSentence(at + length) && !wholeSentences) continue;
      if (words.slice(at, at + length).every((word, i) => word !== '' && word === words[at + length + i])) return true;
    }
  }
  return false;
}

test('loops seen in transcripts under noise are written once', () => {
  assert.is(
    withoutDecoderLoops('And so my fellow Americans, and so my fellow Americans. As not.'),
    'And so my fellow Americans. As not.',
  );
  assert.is(
    withoutDecoderLoops('What your country can do for you? Ask what you can ask what you can do for your country.'),
    'What your country can do for you? Ask what you can do for your country.',
  );
  assert.is(withoutDecoderLoops('before the winter storms the winter storms the winter storms'), 'before the winter storms');
  // Under another voice: whole sentences written again.
  assert.is(withoutDecoderLoops("I hope I won't see him again. I hope I won't see him again."), "I hope I won't see him again.");
  assert.is(
    withoutDecoderLoops("No, but I'm glad to see you again, sir. I'm glad to see you again. I'm glad to see you again. I know."),
    "No, but I'm glad to see you again, sir. I'm glad to see you again. I know.",
  );
  // The copy may end the segment unpunctuated; the sentence keeps its end.
  assert.is(
    withoutDecoderLoops('And you always want to see it in the superlative degree. And you always want to see it in the superlative degree'),
    'And you always want to see it in the superlative degree.',
  );
});

test('a word or two said again, a sentence said again, and phrases said again later, stay', () => {
  for (const text of [
    'No, no, that is not what I meant.',
    'It was very very cold.',
    'Ask not what your country can do for you, ask what you can do for your country.',
    'I said the same thing. I said the same thing yesterday, too.',
    'Yes. Yes. Thank you. Thank you.',
    'Go on. Go on. Go on and on.',
    'He said we will win. We will win.',
  ]) {
    assert.is(withoutDecoderLoops(text), text);
  }
});

const transcript = fc
  .array(fc.constantFrom('ask', 'what', 'you', 'can', 'do', 'Ask', 'can,', 'you.', 'do?', '-', 'so'), { maxLength: 40 })
  .map((tokens) => tokens.join(' '));

/** Transcripts of whole sentences, long and short, often one said twice in a row, the last sometimes unpunctuated. */
const sentences = fc
  .tuple(
    fc.array(fc.constantFrom('I am glad to see you again.', 'Yes.', 'Thank you.', 'He turned sharply and faced Gregson.', 'Go on and on.', 'Go on.', 'Will we ever forget it?'), { maxLength: 8 }),
    fc.boolean(),
  )
  .map(([said, cutOff]) => {
    const text = said.join(' ');
    return cutOff ? text.replace(/[.?!]$/, '') : text;
  });

test('no loop is left, every word left was there in order, and a text without loops is unchanged', () => {
  fc.assert(
    fc.property(fc.oneof(transcript, sentences), (text) => {
      const cleaned = withoutDecoderLoops(text);
      const before = comparable(text);
      const after = comparable(cleaned);
      const tokensOf = (some: string) => some.split(/\s+/).filter(Boolean);
      assert.not.ok(hasLoop(tokensOf(cleaned)), `"${cleaned}" still loops`);
      let i = 0;
      for (const word of after) {
        while (i < before.length && before[i] !== word) i++;
        assert.ok(i++ < before.length, `"${cleaned}" is not "${text}" with words left out`);
      }
      if (!hasLoop(tokensOf(text))) assert.is(cleaned, text.split(/\s+/).filter(Boolean).join(' '));
      assert.is(withoutDecoderLoops(cleaned), cleaned);
    }),
    { numRuns: 2000 },
  );
});

test.run();
