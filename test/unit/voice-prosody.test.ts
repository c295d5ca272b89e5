// Voice prosody on synthetic speech: pitch variability on voiced glides and tones whose pitch
// movement is known, pause ratio on a known pattern of speech and pauses, speaking rate on
// espeak-ng speech of known words at known rates; per second, per utterance and per interval.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import { pauseRatio, pitchVariability, semitones, speakingRate } from '../../bus/prosody.ts';
import { countWords } from '../../bus/words.ts';
import { VoiceAnalyzer, type SpeechAudio } from '../../actors/voice/analyzer.ts';
import { VAD_STEP, VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { withSpeakingRate } from '../../actors/session/speaking-rates.ts';
import { wordsPerInterval } from '../../storage/results/speaking-rate.ts';
import { readConfig } from '../../bus/config.ts';

const model = await VoiceActivityModel.load(readConfig().modelsDir);

const SESSION = '0123456789abcdef01234567';
const RATE = 16000;
const STEP_SECONDS = VAD_STEP / RATE;

const near = (actual: number | undefined, expected: number, tolerance: number, label = '') =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= tolerance, `${label} ${actual} vs ${expected} ± ${tolerance}`);

/** A voice-like tone (fundamental and five harmonics) whose pitch in semitones follows `tone(t)`. */
function voiced(seconds: number, tone: (t: number) => number): Float32Array {
  const out = new Float32Array(Math.round(seconds * RATE));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    phase += (2 * Math.PI * 100 * 2 ** (tone(i / RATE) / 12)) / RATE;
    let value = 0;
    for (let k = 1; k <= 6; k++) value += Math.sin(k * phase) / k;
    out[i] = 0.2 * value;
  }
  return out;
}

function toPcm(samples: Float32Array): Buffer {
  const pcm = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), 2 * i);
  return pcm;
}

async function analyse(pcm: Buffer): Promise<{ rows: AudioSecond[]; segments: SpeechAudio[] }> {
  const rows: AudioSecond[] = [];
  const segments: SpeechAudio[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const stream = streams.open({ session: SESSION, startOffset: 0, onSecond: (row) => rows.push(row), onSegment: (s) => segments.push(s) });
  streams.write(stream, pcm);
  await streams.close(stream);
  return { rows, segments };
}

/** Sums of the rows, finished as the timelines finish them. */
function pooled(rows: AudioSecond[]) {
  const sum = (pick: (row: AudioSecond) => number | undefined) => rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
  const speech = rows.filter((row) => row.speechSeconds);
  return {
    pitchVariability: pitchVariability(sum((r) => r.voicedFrames), sum((r) => r.semitoneSum), sum((r) => r.semitoneSquares)),
    speechSeconds: sum((r) => r.speechSeconds),
    pauseRatio: pauseRatio(
      sum((r) => r.speechSeconds),
      Math.min(...speech.map((r) => r.speechStart!)),
      Math.max(...speech.map((r) => r.speechEnd!)),
    ),
  };
}

/** `text` spoken by espeak-ng at `wpm` words a minute, as 16 kHz s16le PCM. */
function spoken(text: string, wpm: number): Buffer {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', String(wpm), '--stdout', text]);
  return execFileSync('ffmpeg', ['-v', 'error', '-i', 'pipe:0', '-ar', '16000', '-ac', '1', '-f', 's16le', 'pipe:1'], { input: wav, maxBuffer: 1 << 26 });
}

/** Where the voice sounds: from the first to the end of the last 20 ms window above -40 dBFS, in seconds. */
function sounding(pcm: Buffer): { start: number; end: number } {
  const window = 0.02 * RATE;
  const loud: number[] = [];
  for (let at = 0; at + window <= pcm.length / 2; at += window) {
    let power = 0;
    for (let i = at; i < at + window; i++) power += (pcm.readInt16LE(2 * i) / 32768) ** 2;
    if (10 * Math.log10(power / window + 1e-12) > -40) loud.push(at);
  }
  return { start: loud[0]! / RATE, end: (loud[loud.length - 1]! + window) / RATE };
}

test('words: runs of non-space characters with a letter or digit', () => {
  assert.is(countWords('And so, my fellow Americans: ask not...'), 7);
  assert.is(countWords("  don't stop - 1963 well-known  \n"), 4);
  assert.is(countWords('... -- !'), 0);
  assert.is(countWords('Über café naïve'), 3);
});

test('prosody arithmetic: semitones, deviation from sums, pause ratio, rate', () => {
  near(semitones(200), 12, 1e-12);
  near(semitones(100 * 2 ** (7 / 12)), 7, 1e-12);
  const tones = [0, 2, 4, 4, 10];
  const mean = tones.reduce((a, b) => a + b) / tones.length;
  const sd = Math.sqrt(tones.reduce((a, b) => a + (b - mean) ** 2, 0) / tones.length);
  near(pitchVariability(5, tones.reduce((a, b) => a + b), tones.reduce((a, b) => a + b * b, 0)), sd, 1e-12);
  assert.is(pitchVariability(1, 7, 49), undefined, 'one frame says nothing');
  assert.is(pitchVariability(3, 21, 147), 0, 'a steady pitch');
  near(pauseRatio(2, 10, 14), 0.5, 1e-12);
  assert.is(pauseRatio(0, 0, 0), undefined);
  near(speakingRate(30, 12), 150, 1e-12);
  assert.is(speakingRate(3, 0), undefined);
});

test('pitch variability: a glide of 6 semitones a second reads 6/sqrt(12) per second, 24/sqrt(12) over 4 s', async () => {
  const { rows } = await analyse(toPcm(voiced(4, (t) => 6 * t)));
  assert.is(rows.length, 4);
  // Uniform over 6 semitones within each second; the last frames of a second reach back one step.
  for (const row of rows) {
    near(row.pitchVariability, 6 / Math.sqrt(12), 0.1, `second ${row.second}`);
    assert.ok(row.voicedFrames! >= 29, `voiced frames ${row.voicedFrames}`);
  }
  // Over the four seconds the pitch spans 24 semitones: exact from the sums, unlike a mean of the seconds' values.
  near(pooled(rows).pitchVariability, 24 / Math.sqrt(12), 0.15, 'four seconds');
});

test('pitch variability: a steady tone is 0; tones 4 semitones apart, half a second each, are 2', async () => {
  for (const row of (await analyse(toPcm(voiced(2, () => 7)))).rows) near(row.pitchVariability, 0, 0.02, `steady, second ${row.second}`);
  const { rows } = await analyse(toPcm(voiced(3, (t) => (Math.floor(2 * t) % 2 ? 4 : 0))));
  for (const row of rows.slice(1)) near(row.pitchVariability, 2, 0.15, `alternating, second ${row.second}`);
  near(pooled(rows).pitchVariability, 2, 0.1, 'three seconds');
});

test('pause ratio and speech seconds follow the VAD steps exactly', () => {
  // The analyser driven step by step, as the batching driver does, with chosen probabilities:
  // second 0 holds steps 0..31 (the 32nd ends at 16384 samples, in second 1).
  const rows: AudioSecond[] = [];
  const segments: SpeechAudio[] = [];
  const analyzer = new VoiceAnalyzer({ session: SESSION, startOffset: 5, onSecond: (row) => rows.push(row), onSegment: (s) => segments.push(s) });
  const speaking = (step: number) => (step >= 2 && step < 12) || (step >= 20 && step < 25) || (step >= 40 && step < 50);
  analyzer.write(toPcm(voiced(60 * STEP_SECONDS, () => 0)));
  for (let step = 0; analyzer.beginStep(); step++) analyzer.endStep(speaking(step) ? 0.9 : 0.05);
  analyzer.flush();
  const [first, second] = rows;
  // Second 5: speech in steps 2-11 and 20-24; from the start of step 2 to the end of step 24.
  near(first!.speechSeconds, 15 * STEP_SECONDS, 1e-9);
  near(first!.speechStart, 5 + 2 * STEP_SECONDS, 1e-9);
  near(first!.speechEnd, 5 + 25 * STEP_SECONDS, 1e-9);
  near(first!.pauseRatio, 1 - 15 / 23, 1e-9);
  // Second 6: steps 40-49, no pause between them.
  near(second!.speechSeconds, 10 * STEP_SECONDS, 1e-9);
  near(second!.pauseRatio, 0, 1e-9);
  // Together: 25 steps of speech from step 2 to step 50.
  near(pooled(rows).pauseRatio, 1 - 25 / 48, 1e-9);
  // One utterance (the gap of 8 steps is under the half second that ends one), whose speech is the 25 steps.
  assert.is(segments.length, 1);
  near(segments[0]!.speech, 25 * STEP_SECONDS, 1e-9);
  const silent = rows.find((row) => row.speechSeconds === 0);
  assert.ok(!silent || (silent.pauseRatio === undefined && silent.speechStart === undefined));
});

const SENTENCE = 'The quick brown fox jumps over the lazy dog while seven bright stars shine above the quiet valley tonight';
const SENTENCE_WORDS = 19;
const GAP = 2;

test('espeak-ng speech at 120 and 240 words a minute: rate per utterance, pauses around a known gap', async () => {
  assert.is(countWords(SENTENCE), SENTENCE_WORDS);
  const rates: number[] = [];
  for (const wpm of [120, 240]) {
    const utterance = spoken(SENTENCE, wpm);
    const silence = (seconds: number) => Buffer.alloc(seconds * RATE * 2);
    const { rows, segments } = await analyse(Buffer.concat([silence(1), utterance, silence(GAP), utterance, silence(1)]));
    assert.is(segments.length, 2, `${wpm}: one segment per utterance`);

    // Per utterance, as the live speech row has it: the words of its transcript over its speech.
    const transcribed = segments.map((segment) => {
      const row = { session: SESSION, start: Math.round(segment.start * 1000) / 1000, end: Math.round(segment.end * 1000) / 1000, text: SENTENCE, positive: 0, neutral: 1, negative: 0, compound: 0 };
      return withSpeakingRate(row, segment.speech);
    });
    // The speaker's rate: its words over the time its voice sounds (espeak-ng's nominal rate leaves out its own pauses).
    const voice = sounding(utterance);
    const truth = (60 * SENTENCE_WORDS) / (voice.end - voice.start);
    for (const row of transcribed) {
      assert.is(row.words, SENTENCE_WORDS);
      near(row.speakingRate, truth, 0.1 * truth, `${wpm} wpm utterance`);
      near(row.speakingRate, (60 * SENTENCE_WORDS) / row.speechSeconds!, 1e-9);
    }
    rates.push(transcribed[0]!.speakingRate!);

    // The pause is the silence between the two voices: the gap and espeak-ng's own silence
    // after and before them, from the first voice's start to the second's end.
    const whole = pooled(rows);
    const length = utterance.length / 2 / RATE;
    const sounds = voice.end - voice.start;
    near(whole.pauseRatio, (length - sounds + GAP) / (length + GAP + sounds), 0.05, `${wpm} wpm, both utterances`);
    // Whole seconds of the silence, a little after the first voice's end (the VAD's hangover).
    const gapSeconds = rows.filter((row) => row.second >= 1 + voice.end + 0.3 && row.second + 1 <= 1 + length + GAP + voice.start);
    assert.ok(gapSeconds.length >= 1 && gapSeconds.every((row) => row.speechSeconds === 0 && row.pauseRatio === undefined), `${wpm}: silent gap`);

    // Per interval from the audio rows and a transcript of the two utterances: the same rate.
    const window = { session: SESSION, granularity: 60, start: 0, end: 60 };
    const words = wordsPerInterval(segments.map((s) => ({ start: s.start, end: s.end, words: SENTENCE_WORDS })), window);
    near(speakingRate(words.get(0)!, whole.speechSeconds), truth, 0.1 * truth, `${wpm} wpm over the interval`);
  }
  near(rates[1]! / rates[0]!, 2, 0.3, 'twice the words a minute reads twice the rate');
});

test('speaking rate: the words over the speech time; none without speech', () => {
  const row = { session: SESSION, start: 9.5, end: 12.5, text: 'six words make up this row', positive: 0, neutral: 1, negative: 0, compound: 0 };
  assert.equal(withSpeakingRate(row, 2.4), { ...row, words: 6, speechSeconds: 2.4, speakingRate: 150 });
  assert.equal(withSpeakingRate(row, 0), { ...row, words: 6, speechSeconds: 0 });
});

test('words per interval: shared in proportion to overlap, counted once in all', () => {
  const segments = [
    { start: 3, end: 7, words: 8 }, // 2 s in [0, 5), 2 s in [5, 10)
    { start: 11, end: 12, words: 3 }, // inside [10, 15)
    { start: 14, end: 24, words: 10 }, // 1 s in [10, 15), 5 s in [15, 20), 4 s in [20, 22) cut at the window's end
    { start: 30, end: 31, words: 0 }, // outside the window
  ];
  const words = wordsPerInterval(segments, { session: SESSION, granularity: 5, start: 0, end: 22 });
  assert.equal([...words.entries()].sort(([a], [b]) => a - b), [[0, 4], [1, 4], [2, 4], [3, 5], [4, 2]]);
  // A window starting mid-segment takes only the part inside it.
  assert.equal([...wordsPerInterval(segments, { session: SESSION, granularity: 10, start: 5, end: 25 })], [[0, 4 + 3 + 1], [1, 9]]);
});

test.run();
