// Word error rate, and the same edits charged to each reference word (to score the voices of
// one transcript apart).
import fc from 'fast-check';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { errorsPerReferenceWord, wordErrorRate, wordErrors } from '../../ops/support/word-error-rate.ts';

test('word error rate counts substitutions, insertions and deletions', () => {
  assert.is(wordErrorRate('ask not what', 'Ask not, what'), 0);
  assert.is(wordErrorRate('ask not what', 'ask what'), 1 / 3);
  assert.is(wordErrorRate('ask not what', 'ask not not what you'), 2 / 3);
});

test('titles count as spoken: "Mr." is "mister"', () => {
  assert.is(wordErrorRate('and mister john dashwood', 'And Mr. John Dashwood'), 0);
  assert.is(wordErrorRate('and mister john dashwood', 'And Mrs. John Dashwood'), 1 / 4);
});

test('each edit is charged to the reference word it touches, insertions to the word before', () => {
  assert.equal(errorsPerReferenceWord('ask not what', 'ask what'), [0, 1, 0]);
  assert.equal(errorsPerReferenceWord('ask not what', 'ask knot what'), [0, 1, 0]);
  assert.equal(errorsPerReferenceWord('ask not what', 'ask not what you'), [0, 0, 1]);
  assert.equal(errorsPerReferenceWord('ask not what', 'so ask not what'), [1, 0, 0]);
  assert.equal(errorsPerReferenceWord('', 'anything'), []);
});

test('the charges add up to the edit distance, for any texts', () => {
  const text = fc.array(fc.constantFrom('ask', 'not', 'what', 'you', 'can'), { maxLength: 12 }).map((list) => list.join(' '));
  fc.assert(
    fc.property(text, text, (reference, hypothesis) => {
      const charged = errorsPerReferenceWord(reference, hypothesis);
      const { errors, words } = wordErrors(reference, hypothesis);
      return charged.length === words && (words === 0 || charged.reduce((sum, n) => sum + n, 0) === errors);
    }),
    { numRuns: 1000 },
  );
});

test.run();
