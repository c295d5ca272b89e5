// Face pipeline time per frame, from an RGB frame to result rows (detection, tracking, crops,
// the expression classifier calls, per-track smoothing, per-second aggregation), at 640 px with
// one face and with six, and what that costs a session at the default analysis rate; as the
// service reads expressions, and as the variants measured against it (ops/bench/lib/expression-variants.ts).
//   node --import tsx ops/bench/face.ts            the service
//   node --import tsx ops/bench/face.ts --steps    also the cost of each expression step on its
//                                                  own (align, flip, ensemble, smoothing) and of
//                                                  some together, against the service (all off),
//                                                  measured in alternating rounds (each starting one
//                                                  variant further on) so load drifts on a shared
//                                                  machine fall on every configuration alike
//   node --import tsx ops/bench/face.ts --savings  the same for what a face costs: detection on a
//                                                  smaller picture and the classifier held between
//                                                  frames (the face effort's steps, FACE_EFFORT_LADDER),
//                                                  against full effort; and each part of
//                                                  detection (input, model, decoding) timed alone
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import {
  CLASS_COUNT,
  CROP_VALUES,
  cropFace,
  cropValues,
  decodeYunet,
  detectionSize,
  ExpressionReader,
  type ExpressionReading,
  FaceAnalyzer,
  FaceDetector,
  type FaceModels,
  loadAnalysisModels,
  paddedSize,
  toScaledYunetInput,
  toYunetInput,
} from '../../actors/face/index.ts';
import { loadModel, MODEL_FILES, ort } from '../../actors/models/index.ts';
import { loadPhoto, type Photo } from '../support/face-photos.ts';
import { alignedGeometry, cropAligned, mirrorCrop } from './lib/aligned-crop.ts';
import {
  heldEffort,
  loadSecondClassifier,
  MINI_XCEPTION_EXPRESSIONS,
  MINI_XCEPTION_ZOOM,
  SERVICE_VARIANT,
  VariantReader,
  type ExpressionVariant,
} from './lib/expression-variants.ts';
import { cpuSecondsOf, elapsedMs, fixed, mean, percentile, printTable } from './lib/stats.ts';
import { TrackSmoother } from './lib/track-smoother.ts';

const config = readConfig();
const { faces: loaded } = await loadAnalysisModels(config.modelsDir);
const secondClassifier = await loadSecondClassifier(config.modelsDir);
const detectorModel = await loadModel(join(config.modelsDir, MODEL_FILES.faceDetector));
const detectors = new Map<number, FaceDetector>([[0, loaded.detector]]);
function detectorFor(width: number): FaceDetector {
  let detector = detectors.get(width);
  if (!detector) detectors.set(width, (detector = new FaceDetector(detectorModel, undefined, width)));
  return detector;
}
/** The tracker's memory in frames (actors/face/analyzer.ts), after which smoothing forgets a track. */
const FORGET_AFTER_FRAMES = Math.max(1, Math.round(2 * config.analysisFps)) + 1;

/** What the pipeline is given for `variant`: the service's own reader when it is the service's reading. */
interface Pipeline {
  models: FaceModels;
  reader(): ExpressionReading;
  effort: ReturnType<typeof heldEffort>;
}
function pipelineOf(variant: ExpressionVariant): Pipeline {
  const models = { ...loaded, detector: detectorFor(variant.detectionWidth ?? 0) };
  const reads = (v: ExpressionVariant) => ({ ...v, detectionWidth: 0, classifyEvery: 1 });
  const serviceReading = describe(reads(variant)) === describe(SERVICE_VARIANT);
  return {
    models,
    reader: () => (serviceReading ? new ExpressionReader(models) : VariantReader.of(variant, models, secondClassifier, FORGET_AFTER_FRAMES)),
    effort: heldEffort(variant),
  };
}

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
  expressionsMs: number[];
}

function newAnalyzer(pipeline: Pipeline, counts: { rows: number; facesSeen: number }): FaceAnalyzer {
  return new FaceAnalyzer({
    session: SESSION,
    models: pipeline.models,
    expressions: pipeline.reader(),
    effort: pipeline.effort,
    fps: config.analysisFps,
    onFaceSecond: () => counts.rows++,
    onVideoSecond: (row) => {
      counts.rows++;
      counts.facesSeen = Math.max(counts.facesSeen, row.faces);
    },
  });
}

/** Offers one frame at a time and waits until its rows are out, as an idle analyser would. */
async function timePipeline(photo: Photo, pipeline: Pipeline, frames = FRAMES): Promise<Pick<Timing, 'pipelineMs' | 'cpuMsPerFrame' | 'facesSeen' | 'rows'>> {
  const counts = { rows: 0, facesSeen: 0 };
  const analyzer = newAnalyzer(pipeline, counts);
  const frame = (i: number) => ({ ...photo, second: Math.floor(i / config.analysisFps) });
  for (let i = 0; i < WARM_UP; i++) {
    analyzer.offer(frame(i));
    await analyzer.flush();
  }
  counts.rows = 0;
  const pipelineMs: number[] = [];
  const { cpuSeconds } = await cpuSecondsOf(async () => {
    for (let i = WARM_UP; i < WARM_UP + frames; i++) {
      const started = performance.now();
      analyzer.offer(frame(i));
      await analyzer.flush();
      pipelineMs.push(elapsedMs(started));
    }
  });
  return { pipelineMs, cpuMsPerFrame: (1000 * cpuSeconds) / frames, ...counts };
}

/** The same stages called one by one, to show where the time goes. */
async function timeStages(photo: Photo, pipeline: Pipeline): Promise<Pick<Timing, 'detectMs' | 'expressionsMs'>> {
  const detectMs: number[] = [];
  const expressionsMs: number[] = [];
  const reader = pipeline.reader();
  for (let i = 0; i < WARM_UP + FRAMES / 3; i++) {
    let started = performance.now();
    const faces = await pipeline.models.detector.detectFaces(photo.rgb, photo.width, photo.height);
    const detect = elapsedMs(started);
    started = performance.now();
    await reader.read(photo, faces, faces.map((_, track) => track));
    const expressions = elapsedMs(started);
    if (i < WARM_UP) continue;
    detectMs.push(detect);
    expressionsMs.push(expressions);
  }
  return { detectMs, expressionsMs };
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

function describe(s: ExpressionVariant): string {
  return (
  [
    s.align && 'align',
    s.flip && 'flip',
    s.ensemble && 'ensemble',
    s.smoothingFrames > 1 && `smoothing ${s.smoothingFrames}`,
    (s.detectionWidth ?? 0) > 0 && `detect ${s.detectionWidth}`,
    (s.classifyEvery ?? 1) > 1 && `classify every ${s.classifyEvery}`,
  ]
    .filter(Boolean)
    .join(' + ') || 'all off (the service)'
  );
}

const frames = CASES.map(({ photo, faces, targetMs }) => ({ name: photo, faces, targetMs, photo: asFrame(loadPhoto(photo)) }));
const results: { name: string; size: string; targetMs: number; timing: Timing }[] = [];
for (const { name, faces, targetMs, photo } of frames) {
  const pipeline = await timePipeline(photo, pipelineOf(SERVICE_VARIANT));
  const stages = await timeStages(photo, pipelineOf(SERVICE_VARIANT));
  if (pipeline.facesSeen !== faces) console.warn(`${name}.jpg: expected ${faces} faces, saw ${pipeline.facesSeen}`);
  results.push({ name: `${name}.jpg (${pipeline.facesSeen} face${pipeline.facesSeen === 1 ? '' : 's'})`, size: `${photo.width}x${photo.height}`, targetMs, timing: { ...pipeline, ...stages } });
}

printTable(
  `Face pipeline per frame (${FRAMES} frames each, frame -> rows; one onnxruntime thread; expressions as the service reads them)`,
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
  ['frame', 'YuNet detection', 'expressions (crops, every classifier call)'],
  results.map(({ name, timing }) => [
    name,
    `${fixed(percentile(timing.detectMs, 50))} / ${fixed(mean(timing.detectMs))}`,
    `${fixed(percentile(timing.expressionsMs, 50), 2)} / ${fixed(mean(timing.expressionsMs), 2)}`,
  ]),
);

/**
 * Whole frames through the pipeline with each variant, CPU per frame against the first variant:
 * median of 9 rounds of 40 frames, each round starting one variant further on, so none always
 * runs first (or after the same one) and load drifts fall on every variant alike.
 */
async function compareVariants(variants: ExpressionVariant[], title: string, against: string): Promise<void> {
  const ROUNDS = 9;
  const PER_ROUND = 40;
  for (const { name, photo } of frames) {
    // Per variant: the p50 and the CPU per frame of each round.
    const rounds = variants.map(() => ({ p50: [] as number[], cpu: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < variants.length; k++) {
        const v = (round + k) % variants.length;
        const timing = await timePipeline(photo, pipelineOf(variants[v]!), PER_ROUND);
        rounds[v]!.p50.push(percentile(timing.pipelineMs, 50));
        rounds[v]!.cpu.push(timing.cpuMsPerFrame);
      }
    }
    const median = (values: number[]) => percentile(values, 50);
    const baseP50 = median(rounds[0]!.p50);
    const baseCpu = median(rounds[0]!.cpu);
    printTable(
      `${title}, ${name}.jpg (median of ${ROUNDS} alternating rounds of ${PER_ROUND} frames; change against ${against})`,
      ['settings', 'p50 ms', 'change', 'CPU ms/frame', 'change', `one-core share at ${config.analysisFps} fps`],
      variants.map((variant, v) => {
        const p50 = median(rounds[v]!.p50);
        const cpu = median(rounds[v]!.cpu);
        const change = (value: number, base: number) => (v === 0 ? '-' : `${value >= base ? '+' : ''}${fixed((100 * (value - base)) / base)} %`);
        return [
          describe(variant),
          fixed(p50, 2),
          change(p50, baseP50),
          fixed(cpu, 2),
          change(cpu, baseCpu),
          `${fixed((100 * cpu * config.analysisFps) / 1000, 2)} %`,
        ];
      }),
    );
  }
}

if (process.argv.includes('--steps')) {
  const OFF = SERVICE_VARIANT;
  const variants: ExpressionVariant[] = [
    OFF,
    { ...OFF, align: true },
    { ...OFF, flip: true },
    { ...OFF, ensemble: true },
    { ...OFF, smoothingFrames: 3 },
    { ...OFF, align: true, flip: true },
    { ...OFF, align: true, ensemble: true },
    { align: true, flip: true, ensemble: true, smoothingFrames: 3 },
  ];
  await compareVariants(variants, 'Cost of each expression step', 'all off');

  // Each step's own work, timed alone: less exposed to a busy machine than whole frames are.
  const photo = frames[0]!.photo;
  const [face] = await loaded.detector.detectFaces(photo.rgb, photo.width, photo.height);
  if (!face) throw new Error('no face in happy.jpg');
  const crops = new Float32Array(2 * CROP_VALUES);
  const small = MINI_XCEPTION_EXPRESSIONS.side;
  const smallCrops = new Float32Array(2 * cropValues(small));
  const smoother = new TrackSmoother(3, 5);
  const probabilities = new Float32Array(CLASS_COUNT).fill(1 / CLASS_COUNT);
  /** Median over 9 batches of the mean time of one call, in ms. */
  async function perCall(work: () => unknown, calls = 100): Promise<number> {
    for (let i = 0; i < calls; i++) await work();
    const batches: number[] = [];
    for (let batch = 0; batch < 9; batch++) {
      const started = performance.now();
      for (let i = 0; i < calls; i++) await work();
      batches.push(elapsedMs(started) / calls);
    }
    return percentile(batches, 50);
  }
  const classifier = loaded.classifier;
  const second = secondClassifier;
  const work: [string, string, () => unknown][] = [
    ['crop around the box, 112x112 (all off)', '-', () => cropFace(photo.rgb, photo.width, photo.height, face, crops, 0)],
    ['crop by the eyes, 112x112', 'align', () => cropAligned(photo.rgb, photo.width, photo.height, alignedGeometry(face.landmarks), crops, 0)],
    ['mirror of a 112x112 crop', 'flip', () => mirrorCrop(crops, 0, 1)],
    ['face-api net, 1 crop', '-', () => classifier.classifyExpressions(crops, 1)],
    ['face-api net, 2 crops (face and mirror)', 'flip', () => classifier.classifyExpressions(crops, 2)],
    ['crop by the eyes, 64x64', 'ensemble', () => cropAligned(photo.rgb, photo.width, photo.height, alignedGeometry(face.landmarks, MINI_XCEPTION_ZOOM), smallCrops, 0, small)],
    ['mini-Xception, 1 crop', 'ensemble', () => second.classifyExpressions(smallCrops, 1)],
    ['smoothing over 3 frames, one track', 'smoothing', () => smoother.smooth([1], probabilities)],
  ];
  const timed: string[][] = [];
  for (const [what, step, run] of work) timed.push([what, step, fixed(await perCall(run), 3)]);
  printTable('Each step\'s own work, per face (ms per call, median of 9 batches of 100 calls)', ['work', 'step', 'ms'], timed);
}

if (process.argv.includes('--savings')) {
  const today = SERVICE_VARIANT;
  const variants: ExpressionVariant[] = [
    today,
    { ...today, detectionWidth: 512 },
    { ...today, detectionWidth: 480 },
    { ...today, detectionWidth: 320 },
    { ...today, classifyEvery: 2 },
    { ...today, classifyEvery: 4 },
    { ...today, detectionWidth: 512, classifyEvery: 2 },
    { ...today, detectionWidth: 480, classifyEvery: 2 },
  ];
  // A still photo: every box stays put, so a held answer is always reused (the most a cadence saves).
  await compareVariants(variants, 'What a face costs', describe(today));

  // Each part of detection alone, on the one-face frame: CPU ms per call, median of 9 batches.
  const photo = frames[0]!.photo;
  const frame = { width: photo.width, height: photo.height };
  async function cpuPerCall(work: () => unknown, calls = 50): Promise<number> {
    for (let i = 0; i < 10; i++) await work();
    const batches: number[] = [];
    for (let batch = 0; batch < 9; batch++) {
      const { cpuSeconds } = await cpuSecondsOf(async () => {
        for (let i = 0; i < calls; i++) await work();
      });
      batches.push((1000 * cpuSeconds) / calls);
    }
    return percentile(batches, 50);
  }
  const rows: string[][] = [];
  for (const width of [0, 512, 480, 320]) {
    const size = detectionSize(frame, width);
    const padW = paddedSize(size.width);
    const padH = paddedSize(size.height);
    const input = new Float32Array(3 * padW * padH);
    const toInput =
      size.width === frame.width
        ? () => toYunetInput(photo.rgb, photo.width, photo.height, input, padW, padH)
        : () => toScaledYunetInput(photo.rgb, frame, size, input, padW, padH);
    toInput();
    const run = () => detectorModel.run({ input: new ort.Tensor('float32', input, [1, 3, padH, padW]) });
    const results = await run();
    const outputs = Object.fromEntries(Object.entries(results).map(([key, tensor]) => [key, tensor.data as Float32Array]));
    const detector = detectorFor(width);
    rows.push([
      `${size.width}x${size.height} (input ${padW}x${padH})`,
      fixed(await cpuPerCall(toInput), 3),
      fixed(await cpuPerCall(run), 3),
      fixed(await cpuPerCall(() => decodeYunet(outputs, padW, padH)), 3),
      fixed(await cpuPerCall(() => detector.detectFaces(photo.rgb, photo.width, photo.height)), 3),
    ]);
  }
  printTable(
    `Detection of ${frames[0]!.name}.jpg (${frame.width}x${frame.height}) by the size YuNet is given (CPU ms per call, median of 9 batches of 50)`,
    ['YuNet picture', 'frame -> input (scaling, BGR planes)', 'model', 'decoding (anchors, NMS)', 'detectFaces (all of it)'],
    rows,
  );
}
