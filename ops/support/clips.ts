// Clips for the tests, the benchmarks and `npm start`'s demo stream, encoded once and cached by
// a hash of their description: H.264 (baseline, a keyframe every second, yuv420p) with optional
// mono AAC, ready to be looped with `-c copy`.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Bump when the encoding recipe changes, so cached clips are rebuilt.
const RECIPE = 3;

// Seconds of fade at each end of a tone clip's audio.
const SPLICE_FADE = 0.25;

export type ClipVideo =
  | { type: 'testsrc' }
  | { type: 'color'; color: string }
  | { type: 'images'; images: { image: string; seconds: number }[] };

export type ClipAudio =
  | { type: 'none' }
  | { type: 'silence' }
  | { type: 'tones'; tones: { hz: number; seconds: number }[] }
  // WAV files in order, with `{ silence: seconds }` gaps wherever wanted.
  | { type: 'wavs'; parts: ({ wav: string } | { silence: number })[] };

export interface ClipSpec {
  width: number;
  height: number;
  seconds: number;
  fps: number;
  video: ClipVideo;
  audio: ClipAudio;
  sampleRate?: 16000 | 44100;
  // flv for rtmp; mp4 or mkv for rtsp (the RTSP feed accepts all three).
  container?: 'flv' | 'mp4' | 'mkv';
}

interface Graph {
  inputs: string[];
  filters: string[];
  count: number;
}

// Adds one ffmpeg input; returns its index for filter labels.
function addInput(graph: Graph, args: string[]): number {
  graph.inputs.push(...args);
  return graph.count++;
}

function videoGraph(spec: ClipSpec, graph: Graph): void {
  const { width, height, fps, video } = spec;
  const size = `${width}x${height}`;
  const finish = `fps=${fps},format=yuv420p,tpad=stop_mode=clone:stop_duration=${spec.seconds}[v]`;
  if (video.type === 'testsrc' || video.type === 'color') {
    const source = video.type === 'testsrc'
      ? `testsrc2=size=${size}:rate=${fps}`
      : `color=c=${video.color}:size=${size}:rate=${fps}`;
    graph.filters.push(`[${addInput(graph, ['-f', 'lavfi', '-i', source])}:v]${finish}`);
    return;
  }
  const labels: string[] = [];
  for (const [n, { image, seconds }] of video.images.entries()) {
    // The picture read once a second and repeated by the fps filter: the same frames as reading
    // it at the clip's rate, without decoding and scaling it for every frame (a 10 s 720p clip
    // of 30 fps took 3.3 s of CPU that way, 1.3 s this way). A second more is read and trimmed
    // off, since fps ends a stream at its last input frame.
    const index = addInput(graph, ['-loop', '1', '-framerate', '1', '-t', String(seconds + 1), '-i', image]);
    graph.filters.push(
      `[${index}:v]scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
        `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${fps},trim=duration=${seconds},format=yuv420p[img${n}]`,
    );
    labels.push(`[img${n}]`);
  }
  graph.filters.push(`${labels.join('')}concat=n=${labels.length}:v=1:a=0,${finish}`);
}

function audioGraph(spec: ClipSpec, graph: Graph): boolean {
  const { audio } = spec;
  const rate = spec.sampleRate ?? 44100;
  if (audio.type === 'none') return false;
  const normalise = `aresample=${rate},aformat=sample_fmts=fltp:channel_layouts=mono`;
  const parts: string[] = [];
  if (audio.type === 'silence') {
    parts.push(`[${addInput(graph, ['-f', 'lavfi', '-i', `anullsrc=r=${rate}:cl=mono`])}:a]`);
  } else if (audio.type === 'tones') {
    for (const { hz, seconds } of audio.tones) {
      parts.push(`[${addInput(graph, ['-f', 'lavfi', '-i', `sine=frequency=${hz}:sample_rate=${rate}:duration=${seconds}`])}:a]`);
    }
  } else {
    for (const part of audio.parts) {
      const args = 'wav' in part
        ? ['-i', part.wav]
        : ['-f', 'lavfi', '-t', String(part.silence), '-i', `anullsrc=r=${rate}:cl=mono`];
      parts.push(`[${addInput(graph, args)}:a]`);
    }
  }
  const normalised = parts.map((label, n) => {
    graph.filters.push(`${label}${normalise}[a${n}]`);
    return `[a${n}]`;
  });
  // A looped clip is spliced end to start, and tones run on across the splice: fading them in
  // and out keeps it from clicking, which a voice-activity model can take for a step of speech.
  const ends = audio.type === 'tones'
    ? `afade=t=in:d=${SPLICE_FADE},apad,afade=t=out:st=${spec.seconds - SPLICE_FADE}:d=${SPLICE_FADE}`
    : 'apad';
  graph.filters.push(`${normalised.join('')}concat=n=${normalised.length}:v=0:a=1,${ends}[a]`);
  return true;
}

// A synthetic picture (a test pattern, a colour) feeds tests of sizes, pacing and load, which no
// model judges: encoded the cheapest way, half the CPU of the slower preset (1.7 s against 3.2 s
// for 10 s of 1080p at 30 fps), for files some 60 % larger that decode as fast. Pictures of faces
// keep the preset whose quality the face tests were judged on.
function preset(video: ClipVideo): string {
  return video.type === 'images' ? 'veryfast' : 'ultrafast';
}

function encodeArgs(spec: ClipSpec, output: string): string[] {
  const graph: Graph = { inputs: [], filters: [], count: 0 };
  videoGraph(spec, graph);
  const withAudio = audioGraph(spec, graph);
  const container = spec.container ?? 'flv';
  return [
    '-hide_banner', '-nostdin', '-loglevel', 'error', '-y',
    ...graph.inputs,
    '-filter_complex', graph.filters.join(';'),
    '-map', '[v]', '-c:v', 'libx264', '-preset', preset(spec.video), '-tune', 'zerolatency',
    '-profile:v', 'baseline', '-pix_fmt', 'yuv420p', '-crf', '28',
    '-g', String(spec.fps), '-keyint_min', String(spec.fps), '-sc_threshold', '0',
    ...(withAudio
      ? ['-map', '[a]', '-c:a', 'aac', '-b:a', '64k', '-ac', '1', '-ar', String(spec.sampleRate ?? 44100)]
      : []),
    '-t', String(spec.seconds),
    ...(container === 'mp4' ? ['-movflags', '+faststart'] : []),
    '-f', container === 'mkv' ? 'matroska' : container,
    output,
  ];
}

function cacheKey(value: unknown): string {
  return createHash('sha256').update(JSON.stringify({ RECIPE, value })).digest('hex').slice(0, 16);
}

// Encodes the clip unless an identical one is cached in `dir`; returns its path.
export async function makeClip(spec: ClipSpec, dir: string, ffmpegPath = 'ffmpeg'): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `clip-${cacheKey(spec)}.${spec.container ?? 'flv'}`);
  if (existsSync(path)) return path;
  const partial = `${path}.${process.pid}.partial`;
  try {
    await run(ffmpegPath, encodeArgs(spec, partial), { maxBuffer: 1 << 20 });
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}

// Speaks `text` with espeak-ng into a WAV file in `dir` (cached); returns its path.
export async function speak(text: string, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `speech-${cacheKey(text)}.wav`);
  if (existsSync(path)) return path;
  const partial = `${path}.${process.pid}.partial.wav`;
  try {
    await run('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', partial, text]);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}

/** The duration of a media file in seconds, as ffprobe reads it. */
export function mediaSeconds(file: string): number {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' });
  const seconds = Number(out.trim());
  if (!(seconds > 0)) throw new Error(`no duration for ${file}: ${out}`);
  return seconds;
}
