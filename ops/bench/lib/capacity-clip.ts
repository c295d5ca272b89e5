// The stream the capacity benchmark publishes N times: what a webcam talk show sends to an
// RTMP ingest. 1280x720 at 30 fps, H.264 high profile at 2.5 Mbit/s with a keyframe every 2 s,
// a moving background with sensor-like grain (so the encoder spends its whole bitrate, as on a
// camera, rather than a few kbit/s on flat colour), four real faces drifting over it, and
// continuous speech in AAC stereo at 44.1 kHz. Encoded once, then looped with `-c copy`.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ffprobePath } from '../../../actors/ingest/index.ts';
import { makeNoise, mixAtSnr, type NoiseKind } from '../../support/noise.ts';
import { decodedSamples, wavFile } from './speech.ts';

const run = promisify(execFile);

// Bump when the recipe changes: the cached clip is found by this name.
const RECIPE = 'v1';

const WIDTH = 1280;
const HEIGHT = 720;
const FPS = 30;

/** Single-face photos of the media folder, one per quadrant of the picture. */
const FACES = ['happy', 'neutral', 'sad', 'surprised'] as const;

// Sentences spoken by espeak-ng between repeats of the JFK sample, so speech never stops for
// longer than a breath and the segmenter cuts segments of ordinary length (10-20 s).
const PASSAGES = [
  'The weather service expects light rain in the morning, clearing by noon, with a gentle breeze from the west and mild temperatures. Tomorrow should be dry and a little warmer.',
  'Our team reviewed the quarterly figures this afternoon. Sales grew in every region except the north, where two stores closed for repairs for most of the summer.',
  'When the museum opened its new wing, visitors lined up around the block. The paintings had been restored over three years by a small group of experts, who worked slowly and carefully.',
];

export interface ClipNoise {
  kind: NoiseKind;
  snrDb: number;
}

export interface ClipOptions {
  /** Where the clip and its spoken passages are kept between runs. */
  dir: string;
  mediaDir: string;
  ffmpegPath: string;
  /** Background noise under the speech (ops/bench/lib/noise.ts), at this SNR; none when absent. */
  noise?: ClipNoise;
}

/** The clip's path: built on the first run (a minute or two), found in `dir` afterwards. */
export async function capacityClip(options: ClipOptions): Promise<string> {
  const { dir, noise } = options;
  const clip = join(dir, `capacity-${RECIPE}${noise ? `-${noise.kind}-${noise.snrDb}dB` : ''}.flv`);
  if (existsSync(clip)) return clip;
  mkdirSync(dir, { recursive: true });
  const parts = await speechParts(options);
  const speech = noise ? [await noisySpeech(parts, noise, options)] : parts;
  const seconds = await totalSeconds(speech, options.ffmpegPath);
  const partial = `${clip}.${process.pid}.partial`;
  try {
    await run(options.ffmpegPath, encodeArgs(options.mediaDir, speech, seconds, partial), { maxBuffer: 1 << 20 });
    renameSync(partial, clip);
  } finally {
    rmSync(partial, { force: true });
  }
  return clip;
}

/** JFK, passage, JFK, passage...: WAV files in the order they are spoken. */
async function speechParts(options: ClipOptions): Promise<string[]> {
  const jfk = join(options.mediaDir, 'speech', 'jfk.wav');
  const parts: string[] = [];
  for (const [i, text] of PASSAGES.entries()) {
    const wav = join(options.dir, `passage-${i + 1}.wav`);
    if (!existsSync(wav)) await run('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', wav, text]);
    parts.push(jfk, wav);
  }
  return parts;
}

/** The parts spoken one after another with `noise` under them, as one 16 kHz WAV file. */
async function noisySpeech(parts: string[], noise: ClipNoise, options: ClipOptions): Promise<string> {
  const decoded = await Promise.all(parts.map((part) => decodedSamples(part, options.ffmpegPath)));
  const speech = new Float32Array(decoded.reduce((sum, samples) => sum + samples.length, 0));
  decoded.reduce((at, samples) => (speech.set(samples, at), at + samples.length), 0);
  const wav = join(options.dir, `speech-${noise.kind}-${noise.snrDb}dB.wav`);
  writeFileSync(wav, wavFile(mixAtSnr(speech, makeNoise(noise.kind, speech.length), noise.snrDb)));
  return wav;
}

async function totalSeconds(wavs: string[], ffmpegPath: string): Promise<number> {
  const ffprobe = ffprobePath(ffmpegPath);
  let total = 0;
  for (const wav of wavs) {
    const { stdout } = await run(ffprobe, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', wav]);
    total += Number(stdout.trim());
  }
  if (!(total > 0)) throw new Error(`could not read the length of the speech parts ${wavs.join(', ')}`);
  return Math.floor(total);
}

// Each face drifts around its quadrant on its own slow ellipse, so the tracker follows moving
// faces and the encoder codes real motion.
function faceOverlay(index: number): { x: string; y: string } {
  const left = index % 2 === 0 ? 80 : 720;
  const top = index < 2 ? 50 : 410;
  const phase = index * 1.7;
  return { x: `${left}+60*sin(t*0.5+${phase})`, y: `${top}+30*cos(t*0.4+${phase})` };
}

function encodeArgs(mediaDir: string, speech: string[], seconds: number, output: string): string[] {
  const inputs = ['-f', 'lavfi', '-i', `testsrc2=size=${WIDTH}x${HEIGHT}:rate=${FPS}`];
  const filters = [`[0:v]hue=H=2*PI*t/30[layer0]`];
  for (const [i, face] of FACES.entries()) {
    inputs.push('-loop', '1', '-framerate', String(FPS), '-i', join(mediaDir, 'faces', `${face}.jpg`));
    const { x, y } = faceOverlay(i);
    filters.push(`[${i + 1}:v]scale=w=400:h=260:force_original_aspect_ratio=decrease,setsar=1[face${i}]`);
    filters.push(`[layer${i}][face${i}]overlay=x='${x}':y='${y}'[layer${i + 1}]`);
  }
  filters.push(`[layer${FACES.length}]noise=alls=10:allf=t,format=yuv420p[v]`);
  const firstWav = FACES.length + 1;
  for (const wav of speech) inputs.push('-i', wav);
  const parts = speech.map((_, i) => `[${firstWav + i}:a]`).join('');
  filters.push(`${parts}concat=n=${speech.length}:v=0:a=1,aresample=44100,aformat=channel_layouts=stereo[a]`);
  return [
    '-hide_banner', '-nostdin', '-loglevel', 'error', '-y',
    ...inputs,
    '-filter_complex', filters.join(';'),
    '-map', '[v]', '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-pix_fmt', 'yuv420p',
    '-b:v', '2500k', '-maxrate', '2500k', '-bufsize', '5000k',
    '-g', String(2 * FPS), '-keyint_min', String(2 * FPS), '-sc_threshold', '0',
    '-map', '[a]', '-c:a', 'aac', '-b:a', '128k', '-ar', '44100', '-ac', '2',
    '-t', String(seconds), '-f', 'flv', output,
  ];
}
