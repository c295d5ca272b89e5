// Face pipeline time per frame, from an RGB frame to result rows (detection, tracking, crops,
// one batched expression call, per-second aggregation), at 640 px with one face and with six,
// and what that costs a session at the default analysis rate.
import { readConfig } from '../../bus/config.ts';
import { FaceAnalyzer } from '../../actors/face/analyzer.ts';
import { CROP_VALUES, cropFace } from '../../actors/face/crop.ts';
import { loadAnalysisModels } from '../../actors/models/analysis-models.ts';
import { loadPhoto, type Photo } from '../support/face-photos.ts';
import { cpuSecondsOf, elapsedMs, fixed, mean, percentile, printTable } from './lib/stats.ts';

const config = readConfig();
const { faces: models } = await loadAnalysisModels(config.modelsDir);

const FRAMES = 150;
const WARM_UP = 10;
const FRAME_WIDTH = 640;
const SESSION = '65f0c0ffee0123456789abcd';
const CASES = [
  { photo: 'happy', faces: 1, targetMs: 15 },
  { photo: 'faces', faces: 6, targetMs: 40 },
] as const;

interface Timing {
  pipelineMs: number[];
  cpuMsPerFrame: number;
  facesSeen: number;
  rows: number;
  detectMs: number[];
  cropMs: number[];
  classifyMs: number[];
}

/** Offers one frame at a time and waits until its rows are out, as an idle analyser would. */
async function timePipeline(photo: Photo): Promise<Pick<Timing, 'pipelineMs' | 'cpuMsPerFrame' | 'facesSeen' | 'rows'>> {
  let rows = 0;
  let facesSeen = 0;
  const analyzer = new FaceAnalyzer({
    session: SESSION,
    models,
    fps: config.analysisFps,
    onFaceSecond: () => rows++,
    onVideoSecond: (row) => {
      rows++;
      facesSeen = Math.max(facesSeen, row.faces);
    },
  });
  const frame = (i: number) => ({ ...photo, second: Math.floor(i / config.analysisFps) });
  for (let i = 0; i < WARM_UP; i++) {
    analyzer.offer(frame(i));
    await analyzer.flush();
  }
  rows = 0;
  const pipelineMs: number[] = [];
  const { cpuSeconds } = await cpuSecondsOf(async () => {
    for (let i = WARM_UP; i < WARM_UP + FRAMES; i++) {
      const started = performance.now();
      analyzer.offer(frame(i));
      await analyzer.flush();
      pipelineMs.push(elapsedMs(started));
    }
  });
  return { pipelineMs, cpuMsPerFrame: (1000 * cpuSeconds) / FRAMES, facesSeen, rows };
}

/** The same stages called one by one, to show where the time goes. */
async function timeStages(photo: Photo): Promise<Pick<Timing, 'detectMs' | 'cropMs' | 'classifyMs'>> {
  const detectMs: number[] = [];
  const cropMs: number[] = [];
  const classifyMs: number[] = [];
  let crops = new Float32Array(0);
  for (let i = 0; i < WARM_UP + FRAMES / 3; i++) {
    let started = performance.now();
    const faces = await models.detector.detectFaces(photo.rgb, photo.width, photo.height);
    const detect = elapsedMs(started);
    started = performance.now();
    if (crops.length < faces.length * CROP_VALUES) crops = new Float32Array(faces.length * CROP_VALUES);
    faces.forEach((face, slot) => cropFace(photo.rgb, photo.width, photo.height, face, crops, slot));
    const crop = elapsedMs(started);
    started = performance.now();
    await models.classifier.classifyExpressions(crops, faces.length);
    const classify = elapsedMs(started);
    if (i < WARM_UP) continue;
    detectMs.push(detect);
    cropMs.push(crop);
    classifyMs.push(classify);
  }
  return { detectMs, cropMs, classifyMs };
}

/** The photo as a 640 px wide frame (as ingest delivers a 16:9 stream): smaller photos sit centred on grey. */
function asFrame(photo: Photo): Photo {
  if (photo.width >= FRAME_WIDTH) return photo;
  const height = Math.round((FRAME_WIDTH * 9) / 16);
  const rgb = new Uint8Array(FRAME_WIDTH * height * 3).fill(128);
  const left = (FRAME_WIDTH - photo.width) >> 1;
  const top = Math.max(0, (height - photo.height) >> 1);
  for (let y = 0; y < Math.min(photo.height, height); y++) {
    rgb.set(photo.rgb.subarray(y * photo.width * 3, (y + 1) * photo.width * 3), ((top + y) * FRAME_WIDTH + left) * 3);
  }
  return { rgb, width: FRAME_WIDTH, height };
}

const results: { name: string; size: string; targetMs: number; timing: Timing }[] = [];
for (const { photo: name, faces, targetMs } of CASES) {
  const photo = asFrame(loadPhoto(name));
  const pipeline = await timePipeline(photo);
  const stages = await timeStages(photo);
  if (pipeline.facesSeen !== faces) console.warn(`${name}.jpg: expected ${faces} faces, saw ${pipeline.facesSeen}`);
  results.push({ name: `${name}.jpg (${pipeline.facesSeen} face${pipeline.facesSeen === 1 ? '' : 's'})`, size: `${photo.width}x${photo.height}`, targetMs, timing: { ...pipeline, ...stages } });
}

printTable(
  `Face pipeline per frame (${FRAMES} frames each, frame -> rows; one onnxruntime thread)`,
  ['frame', 'size', 'p50 ms', 'p95 ms', 'target', 'CPU ms/frame', `one-core share at ${config.analysisFps} fps`],
  results.map(({ name, size, targetMs, timing }) => [
    name,
    size,
    fixed(percentile(timing.pipelineMs, 50)),
    fixed(percentile(timing.pipelineMs, 95)),
    `< ${targetMs} ms: ${percentile(timing.pipelineMs, 95) < targetMs ? 'met' : 'missed'}`,
    fixed(timing.cpuMsPerFrame),
    `${fixed((100 * timing.cpuMsPerFrame * config.analysisFps) / 1000)} % (wall p50: ${fixed((100 * percentile(timing.pipelineMs, 50) * config.analysisFps) / 1000)} %)`,
  ]),
);
printTable(
  'Where the time goes (p50 / mean ms per frame, stages called one by one)',
  ['frame', 'YuNet detection', 'crops', 'expressions (one batch)'],
  results.map(({ name, timing }) => [
    name,
    `${fixed(percentile(timing.detectMs, 50))} / ${fixed(mean(timing.detectMs))}`,
    `${fixed(percentile(timing.cropMs, 50), 2)} / ${fixed(mean(timing.cropMs), 2)}`,
    `${fixed(percentile(timing.classifyMs, 50))} / ${fixed(mean(timing.classifyMs))}`,
  ]),
);
