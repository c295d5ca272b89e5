// Pitch tracking without octave errors: voice-like tones that fool the McLeod method on its own
// into jumping an octave, real octave glides and jumps that must still be followed, and the
// spread of the JFK sample's pitch.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { PitchDetector } from 'pitchy';
import type { AudioSecond } from '../../bus/contracts/rows.ts';
import { pitchVariability, semitones } from '../../bus/prosody.ts';
import { PitchTracker, VOICE_MAX_HZ } from '../../actors/voice/pitch.ts';
import { VAD_STEP, VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { jfkPcm, pcmToFloat } from '../../ops/support/voice-media.ts';
import { readConfig } from '../../bus/config.ts';

const model = await VoiceActivityModel.load(readConfig().modelsDir);

const RATE = 16000;
const FRAME = 2 * VAD_STEP;

/** A tone whose fundamental follows `hz(t)`, with harmonic k at amplitude `amplitudes(t)[k - 1]`. */
function harmonic(seconds: number, hz: (t: number) => number, amplitudes: (t: number) => number[]): Float32Array {
  const out = new Float32Array(Math.round(seconds * RATE));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    phase += (2 * Math.PI * hz(i / RATE)) / RATE;
    let value = 0;
    amplitudes(i / RATE).forEach((amplitude, k) => (value += amplitude * Math.sin((k + 1) * phase)));
    out[i] = 0.1 * value;
  }
  return out;
}

/** Harmonics falling off as 1/k, as in a plain voiced sound. */
const plain = () => [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6];

/**
 * A 140 Hz voice with a slight vibrato (±0.3 semitones at 5 Hz) whose second harmonic is the
 * strongest and whose fundamental fades out for about 50 ms every 200 ms, as when a formant
 * moves off it: a frame on its own then shows the period of the second harmonic.
 */
const FADING_HZ = (t: number) => 140 * 2 ** ((0.3 * Math.sin(2 * Math.PI * 5 * t)) / 12);
function fadingFundamental(seconds: number): Float32Array {
  const fade = (t: number) => Math.exp(-((((t % 0.2) - 0.1) / 0.05) ** 2));
  return harmonic(seconds, FADING_HZ, (t) => [0.35 * (1 - fade(t)), 1, 0.2, 0.5, 0.1, 0.2]);
}

interface Frame {
  /** Seconds from the start to the frame's middle. */
  time: number;
  hz: number;
}

/** Frames as the analyser steps them (64 ms, one every 32 ms) read by `read`. */
function frames(samples: Float32Array, read: (frame: Float32Array, meanSquare: number) => number): Frame[] {
  const out: Frame[] = [];
  for (let at = 0; at + FRAME <= samples.length; at += VAD_STEP) {
    const frame = samples.subarray(at, at + FRAME);
    const meanSquare = frame.reduce((sum, x) => sum + x * x, 0) / FRAME;
    out.push({ time: (at + FRAME / 2) / RATE, hz: read(frame, meanSquare) });
  }
  return out;
}

const tracked = (samples: Float32Array) => {
  const tracker = new PitchTracker(FRAME);
  return frames(samples, (frame, meanSquare) => tracker.frequency(frame, meanSquare));
};

/** The McLeod method frame by frame, with the tracker's level and clarity checks and a range of 65-1000 Hz. */
const naive = (samples: Float32Array) => {
  const detector = PitchDetector.forFloat32Array(FRAME);
  return frames(samples, (frame, meanSquare) => {
    if (meanSquare < 10 ** -4.5) return 0;
    const [hz, clarity] = detector.findPitch(frame, RATE);
    return clarity >= 0.8 && hz >= 65 && hz <= 1000 ? hz : 0;
  });
};

const voicedOf = (track: Frame[]) => track.filter((frame) => frame.hz > 0);
/** Semitones from the true pitch. */
const offBy = (frame: Frame, hz: (t: number) => number) => semitones(frame.hz) - semitones(hz(frame.time));

function deviation(track: Frame[]): number {
  const tones = voicedOf(track).map((frame) => semitones(frame.hz));
  return pitchVariability(tones.length, tones.reduce((a, b) => a + b, 0), tones.reduce((a, b) => a + b * b, 0))!;
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

async function analyse(samples: Float32Array): Promise<AudioSecond[]> {
  const pcm = Buffer.alloc(2 * samples.length);
  samples.forEach((x, i) => pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, x)) * 32767), 2 * i));
  const rows: AudioSecond[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const stream = streams.open({ session: '0123456789abcdef01234567', startOffset: 0, onSecond: (row) => rows.push(row), onSegment: () => {} });
  streams.write(stream, pcm);
  await streams.close(stream);
  return rows;
}

function pooledVariability(rows: AudioSecond[]): number | undefined {
  const sum = (pick: (row: AudioSecond) => number | undefined) => rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
  return pitchVariability(sum((r) => r.voicedFrames), sum((r) => r.semitoneSum), sum((r) => r.semitoneSquares));
}

test('a fading fundamental: the McLeod method alone jumps an octave, the tracker stays on the fundamental', () => {
  const samples = fadingFundamental(2);
  const jumps = voicedOf(naive(samples)).filter((frame) => Math.abs(offBy(frame, FADING_HZ) - 12) < 1);
  assert.ok(jumps.length >= 10, `the signal must fool the method alone: ${jumps.length} octave jumps`);
  assert.ok(deviation(naive(samples)) > 3, `alone: ${deviation(naive(samples))} semitones`);

  const track = tracked(samples);
  assert.is(voicedOf(track).length, track.length, 'every frame voiced');
  for (const frame of track) assert.ok(Math.abs(offBy(frame, FADING_HZ)) < 0.5, `${frame.time} s: ${frame.hz} Hz`);
  // The vibrato alone: 0.3 / sqrt(2) semitones.
  assert.ok(deviation(track) < 0.3, `tracked: ${deviation(track)} semitones`);
});

test('a fading fundamental: the pitch variability of every second and of all is the vibrato\'s', async () => {
  const rows = await analyse(fadingFundamental(3));
  for (const row of rows) assert.ok(row.pitchVariability! < 0.3, `second ${row.second}: ${row.pitchVariability}`);
  assert.ok(pooledVariability(rows)! < 0.3, `three seconds: ${pooledVariability(rows)}`);
});

test('an octave glide up and back down within a second is followed all the way', () => {
  // Two octaves a second: far faster than speech moves, yet never an octave within the history.
  const hz = (t: number) => 120 * 2 ** (1 - Math.abs(2 * t - 1));
  const track = tracked(harmonic(1, hz, plain));
  assert.ok(voicedOf(track).length >= 0.9 * track.length, `${voicedOf(track).length} of ${track.length} frames voiced`);
  for (const frame of voicedOf(track)) assert.ok(Math.abs(offBy(frame, hz)) < 1, `${frame.time} s: ${frame.hz} Hz vs ${hz(frame.time)}`);
});

test('an octave jump is followed at once, up and down', () => {
  // A voice that really changed octave repeats no better at the period of the octave it left.
  for (const [from, to] of [[150, 300], [300, 150]] as const) {
    const hz = (t: number) => (t < 0.6 ? from : to);
    const track = tracked(harmonic(1.2, hz, plain));
    const whole = track.filter((frame) => Math.abs(frame.time - 0.6) >= FRAME / 2 / RATE);
    assert.ok(whole.length >= track.length - 2, 'frames not straddling the jump');
    for (const frame of whole) assert.ok(Math.abs(offBy(frame, hz)) < 0.2, `${from} -> ${to}, ${frame.time} s: ${frame.hz} Hz`);
  }
});

test('JFK speech: no octave outliers in the voiced pitch', async () => {
  const pcm = await jfkPcm();
  const figures = (track: Frame[]) => {
    const sorted = voicedOf(track).map((frame) => frame.hz).sort((a, b) => a - b);
    return { frames: sorted.length, median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted.at(-1)!, sd: deviation(track) };
  };
  const show = ({ frames, median, p95, max, sd }: ReturnType<typeof figures>) =>
    `${frames} voiced frames, median ${median.toFixed(0)} Hz, p95 ${p95.toFixed(0)} Hz (${(p95 / median).toFixed(2)} x median), max ${max.toFixed(0)} Hz, ${sd.toFixed(2)} semitones SD`;
  const alone = figures(naive(pcmToFloat(pcm)));
  const ours = figures(tracked(pcmToFloat(pcm)));
  const variability = pooledVariability(await analyse(pcmToFloat(pcm)));
  console.log(`  JFK, McLeod alone: ${show(alone)}\n  JFK, tracked:      ${show(ours)}; pitch variability of the sample ${variability?.toFixed(2)}`);
  assert.ok(ours.p95 < 1.6 * ours.median, show(ours));
  assert.ok(ours.max <= VOICE_MAX_HZ);
  assert.ok(ours.frames >= 0.9 * alone.frames, 'octave errors are folded back, not merely dropped');
  assert.ok(variability !== undefined && variability < 3, `pitch variability ${variability}`);
});

test.run();
