// Face counts on small, dim, noisy faces: the six-person group photo (faces.jpg) placed N px wide
// in the middle of a 1280x720 picture, darkened and with sensor noise, encoded as a streamer
// would send it (H.264, 2.5 Mbit/s), then sampled and scaled as the ingest does (ANALYSIS_FPS, longer
// side 640 px) and analysed frame by frame by the session's face analyser. Prints `detectedFaces` per
// 10 s interval, counted as storage counts it, and how often each frame held each count of faces.
//   node --import tsx ops/bench/small-faces.ts [--seconds 90] [--width 420 640] [--brightness -0.5] [--noise 20]
//                                              [--detection-width 0] (YuNet's picture, as a step of the face effort)
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type FaceSecond, readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { FaceAnalyzer, loadAnalysisModels } from '../../actors/face/index.ts';
import { analysisSize, scaleFilter } from '../../actors/ingest/index.ts';
import { heldEffort, SERVICE_VARIANT } from './lib/expression-variants.ts';
import { printTable } from './lib/stats.ts';

const run = promisify(execFile);
const config = readConfig();
const tooling = readOpsConfig();

const FRAME = { width: 1280, height: 720 };
const STREAM_FPS = 30;
const INTERVAL = 10;
const SESSION = '65f0c0ffee0123456789abcd';

function option(name: string, fallback: string[]): string[] {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const values: string[] = [];
  for (let i = at + 1; i < process.argv.length && !process.argv[i]!.startsWith('--'); i++) values.push(process.argv[i]!);
  return values;
}
const seconds = Number(option('seconds', ['90'])[0]);
const widths = option('width', ['420', '640']).map(Number);
const brightness = Number(option('brightness', ['-0.5'])[0]);
const noise = Number(option('noise', ['20'])[0]);

/** The clip of one photo width, built once and kept under var/bench/. */
async function clip(photoWidth: number): Promise<string> {
  const dir = join(config.varDir, 'bench', 'small-faces');
  const path = join(dir, `group-${photoWidth}px-b${brightness}-n${noise}-${seconds}s.mp4`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial.mp4`;
  const picture = [
    `color=c=0x808080:s=${FRAME.width}x${FRAME.height}:r=${STREAM_FPS}[ground]`,
    `[0:v]scale=${photoWidth}:-2[photo]`,
    `[ground][photo]overlay=(W-w)/2:(H-h)/2:shortest=1,eq=brightness=${brightness},noise=alls=${noise}:allf=t,format=yuv420p`,
  ].join(';');
  try {
    await run(config.ffmpegPath, [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-loop', '1', '-framerate', String(STREAM_FPS), '-t', String(seconds), '-i', join(tooling.mediaDir, 'faces', 'faces.jpg'),
      '-filter_complex', picture,
      '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '2500k', '-maxrate', '2500k', '-bufsize', '5000k', '-g', '60',
      '-t', String(seconds), partial,
    ]);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}

/** The clip's frames at the ingest's rate and size (ANALYSIS_FPS, longer side 640 px, RGB24), fully decoded. */
async function* frames(path: string): AsyncGenerator<Uint8Array> {
  const { width, height } = analysisSize(FRAME);
  const bytes = width * height * 3;
  const ffmpeg = spawn(config.ffmpegPath, [
    '-hide_banner', '-loglevel', 'error', '-i', path,
    '-vf', `fps=${config.analysisFps},${scaleFilter()}`, '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1',
  ], { stdio: ['ignore', 'pipe', 'inherit'] });
  let pending = Buffer.alloc(0);
  for await (const chunk of ffmpeg.stdout as AsyncIterable<Buffer>) {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= bytes) {
      yield new Uint8Array(pending.subarray(0, bytes));
      pending = pending.subarray(bytes);
    }
  }
}

interface Counts {
  /** `detectedFaces` of each 10 s interval: distinct tracks with a face-second in it. */
  detected: number[];
  /** Frames by the number of faces found in them. */
  facesPerFrame: Map<number, number>;
  frames: number;
}

async function analyse(path: string): Promise<Counts> {
  const { faces: models } = await loadAnalysisModels(config.modelsDir);
  const effort = heldEffort({ ...SERVICE_VARIANT, detectionWidth: Number(option('detection-width', ['0'])[0]) });
  const tracksByInterval = new Map<number, Set<number>>();
  const facesPerFrame = new Map<number, number>();
  const onFaceSecond = (row: FaceSecond) => {
    const interval = Math.floor(row.second / INTERVAL);
    tracksByInterval.set(interval, (tracksByInterval.get(interval) ?? new Set()).add(row.track));
  };
  const analyzer = new FaceAnalyzer({ session: SESSION, models, effort, fps: config.analysisFps, onFaceSecond, onVideoSecond: () => {} });
  const detector = models.detector;
  const { width, height } = analysisSize(FRAME);
  let index = 0;
  for await (const rgb of frames(path)) {
    // Each frame is analysed before the next is offered: this measures what is found, not speed.
    analyzer.offer({ rgb, width, height, second: Math.floor(index++ / config.analysisFps) });
    await analyzer.idle();
    const found = (await detector.detectFaces(rgb, width, height, effort.current.detectionWidth)).length;
    facesPerFrame.set(found, (facesPerFrame.get(found) ?? 0) + 1);
  }
  await analyzer.flush();
  const intervals = Math.ceil(index / config.analysisFps / INTERVAL);
  const detected = Array.from({ length: intervals }, (_, i) => tracksByInterval.get(i)?.size ?? 0);
  return { detected, facesPerFrame, frames: index };
}

const rows: string[][] = [];
for (const width of widths) {
  const counts = await analyse(await clip(width));
  const perFrame = [...counts.facesPerFrame].sort(([a], [b]) => a - b).map(([faces, n]) => `${faces}: ${((100 * n) / counts.frames).toFixed(0)} %`);
  rows.push([`${width} px`, counts.detected.join(', '), perFrame.join(', ')]);
}
printTable(
  `faces.jpg (six people) in ${FRAME.width}x${FRAME.height}, eq=brightness=${brightness}, noise=alls=${noise}:allf=t, ${seconds} s at ${config.analysisFps} fps, analysed at ${analysisSize(FRAME).width}x${analysisSize(FRAME).height}`,
  ['photo width', `detectedFaces per ${INTERVAL} s`, 'frames by faces found'],
  rows,
);
