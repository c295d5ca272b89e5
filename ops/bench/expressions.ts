// Expression accuracy of the real face pipeline: the service's way of reading expressions and
// the variants measured against it (ops/bench/lib/expression-variants.ts).
// Labelled face images are streamed as a live stream would bring them: each image is a clip of
// a few seconds at ANALYSIS_FPS, every frame a 640x360 picture with the image centred on grey and
// a little camera jitter (a pixel or two of shift, a fraction of a degree, brightness, sensor
// noise); clips follow each other without a gap, so a track changes expression as a person
// would. Every configuration gets the same frames, through its own FaceAnalyzer (detection,
// tracking, crops, classifiers, smoothing, per-second rows). Scored per face-second: the
// dominant emotion of the second's main face (most frames) against the clip's label.
//
//   node --import tsx ops/bench/expressions.ts                 the project's test photos, augmented
//   node --import tsx ops/bench/expressions.ts --dir <folder>  labelled images: <folder>/<class>/*.jpg|png,
//                                                              or files named <class>_*.jpg|png
//   options: --augment (augment a --dir set too), --quick (a smaller augmentation grid),
//            --seconds N (clip length, 2), --configs a,b,... (names below), --json <file>
// See ops/bench/README-expressions.md for the set, its provenance and the figures.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { inflateSync } from 'node:zlib';
import jpeg from 'jpeg-js';
import { EMOTION_KEYS, type EmotionKey, type FaceSecond, readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import {
  EMOTION_OF_CLASS,
  EXPRESSION_CLASSES,
  type ExpressionClass,
  type Face,
  FaceAnalyzer,
  FaceDetector,
  loadAnalysisModels,
} from '../../actors/face/index.ts';
import { loadModel, MODEL_FILES } from '../../actors/models/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { heldEffort, loadSecondClassifier, MINI_XCEPTION_ZOOM, SERVICE_VARIANT, VariantReader, type ExpressionVariant } from './lib/expression-variants.ts';
import { fixed, printTable } from './lib/stats.ts';

const config = readConfig();
const tooling = readOpsConfig();
const FRAME_WIDTH = 640;
const FRAME_HEIGHT = 360;
/** The image's share of the frame's width and height at augmentation scale 1. */
const FIT = 0.9;
const SESSION = '65f0c0ffee0123456789abcd';

// ---- arguments ----

const args = process.argv.slice(2);
function option(name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
}
const dir = option('--dir');
const seconds = Number(option('--seconds') ?? 2);
const quick = args.includes('--quick');
const augmentDir = args.includes('--augment');
const jsonOut = option('--json');
if (!Number.isInteger(seconds) || seconds < 1) throw new Error('--seconds takes a whole number >= 1');

// ---- configurations ----

const OFF = SERVICE_VARIANT;
interface Configuration {
  name: string;
  settings: ExpressionVariant;
  /** The second classifier in the first one's place: a diagnostic, not a setting of the service. */
  secondOnly?: boolean;
  /** face-api's crop side as a share of the box's (its spec's zoom, 1): a diagnostic of the framing. */
  zoom?: number;
}
const CONFIGURATIONS: Configuration[] = [
  { name: 'baseline (all off)', settings: OFF },
  { name: 'align', settings: { ...OFF, align: true } },
  { name: 'flip', settings: { ...OFF, flip: true } },
  { name: 'ensemble', settings: { ...OFF, ensemble: true } },
  { name: 'smoothing 3', settings: { ...OFF, smoothingFrames: 3 } },
  { name: 'mini-Xception alone', settings: OFF, secondOnly: true },
  { name: 'mini-Xception alone + align', settings: { ...OFF, align: true }, secondOnly: true },
  { name: 'align + ensemble', settings: { ...OFF, align: true, ensemble: true } },
  { name: 'align + flip', settings: { ...OFF, align: true, flip: true } },
  { name: 'align + flip + ensemble', settings: { ...OFF, align: true, flip: true, ensemble: true } },
  { name: 'align + ensemble + smoothing 3', settings: { ...OFF, align: true, ensemble: true, smoothingFrames: 3 } },
  { name: 'all (align + flip + ensemble + smoothing 3)', settings: { align: true, flip: true, ensemble: true, smoothingFrames: 3 } },
  // What a face costs, with the default align: detection on a smaller picture, classification held between frames.
  { name: 'align + detect 512', settings: { ...OFF, align: true, detectionWidth: 512 } },
  { name: 'align + detect 480', settings: { ...OFF, align: true, detectionWidth: 480 } },
  { name: 'align + detect 448', settings: { ...OFF, align: true, detectionWidth: 448 } },
  { name: 'align + detect 320', settings: { ...OFF, align: true, detectionWidth: 320 } },
  { name: 'align + detect 384', settings: { ...OFF, align: true, detectionWidth: 384 } },
  { name: 'align + classify every 2', settings: { ...OFF, align: true, classifyEvery: 2 } },
  { name: 'align + classify every 4', settings: { ...OFF, align: true, classifyEvery: 4 } },
  { name: 'align + detect 320 + classify every 2', settings: { ...OFF, align: true, detectionWidth: 320, classifyEvery: 2 } },
  { name: 'align + detect 480 + classify every 2', settings: { ...OFF, align: true, detectionWidth: 480, classifyEvery: 2 } },
  { name: 'align + detect 512 + classify every 2', settings: { ...OFF, align: true, detectionWidth: 512, classifyEvery: 2 } },
  ...[0.85, 1.15, 1.3].map((zoom) => ({ name: `box crop zoom ${zoom}`, settings: OFF, zoom })),
  // The effort ladder's lighter steps (FACE_EFFORT_LADDER).
  { name: 'detect 480 + classify every 2', settings: { ...OFF, detectionWidth: 480, classifyEvery: 2 } },
  { name: 'detect 320 + classify every 2', settings: { ...OFF, detectionWidth: 320, classifyEvery: 2 } },
];
const sameSettings = (a: ExpressionVariant, b: ExpressionVariant) =>
  a.align === b.align && a.flip === b.flip && a.ensemble === b.ensemble && a.smoothingFrames === b.smoothingFrames &&
  (a.detectionWidth ?? 0) === (b.detectionWidth ?? 0) && (a.classifyEvery ?? 1) === (b.classifyEvery ?? 1);
/** A configuration of the reading itself: not one of the diagnostics. */
const runnable = (c: Configuration) => !c.secondOnly && !c.zoom;
const chosen = option('--configs')?.split(',').map((name) => name.trim());
const configurations = chosen ? CONFIGURATIONS.filter((c) => chosen.includes(c.name)) : CONFIGURATIONS;
if (configurations.length === 0) throw new Error(`no configuration named ${chosen?.join(', ')}; known: ${CONFIGURATIONS.map((c) => c.name).join('; ')}`);

// ---- images ----

interface Image {
  rgb: Uint8Array;
  width: number;
  height: number;
}
interface Sample {
  label: ExpressionClass;
  source: string;
  image: Image;
}

const ALIASES: Record<string, ExpressionClass> = {
  neutral: 'neutral',
  happy: 'happy',
  happiness: 'happy',
  joy: 'happy',
  sad: 'sad',
  sadness: 'sad',
  angry: 'angry',
  anger: 'angry',
  fear: 'fearful',
  fearful: 'fearful',
  disgust: 'disgusted',
  disgusted: 'disgusted',
  surprise: 'surprised',
  surprised: 'surprised',
};

function labelOf(name: string): ExpressionClass | undefined {
  return ALIASES[name.toLowerCase().split(/[^a-z]/)[0] ?? ''];
}

function decodeImage(path: string): Image {
  const data = readFileSync(path);
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return decodePng(data, path);
  const image = jpeg.decode(data, { useTArray: true, formatAsRGBA: false, maxMemoryUsageInMB: 1024 });
  return { rgb: image.data, width: image.width, height: image.height };
}

/** 8-bit, non-interlaced PNG (grey, grey + alpha, RGB, RGBA, palette) to RGB; alpha is dropped. */
function decodePng(data: Buffer, path: string): Image {
  let offset = 8;
  let width = 0;
  let height = 0;
  let colourType = 0;
  let palette: Buffer | undefined;
  const idat: Buffer[] = [];
  while (offset < data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      colourType = body[9]!;
      if (body[8] !== 8 || body[12] !== 0) throw new Error(`${path}: only 8-bit non-interlaced PNG is read`);
    } else if (type === 'PLTE') palette = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colourType];
  if (!channels) throw new Error(`${path}: PNG colour type ${colourType} not read`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const upLeft = y > 0 && x >= channels ? pixels[(y - 1) * stride + x - channels]! : 0;
      let value = line[x]!;
      if (filter === 1) value += left;
      else if (filter === 2) value += up;
      else if (filter === 3) value += (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        value += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = value & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    if (colourType === 3) {
      const entry = pixels[i]! * 3;
      rgb[i * 3] = palette?.[entry] ?? 0;
      rgb[i * 3 + 1] = palette?.[entry + 1] ?? 0;
      rgb[i * 3 + 2] = palette?.[entry + 2] ?? 0;
    } else if (channels <= 2) {
      rgb.fill(pixels[i * channels]!, i * 3, i * 3 + 3);
    } else {
      rgb[i * 3] = pixels[i * channels]!;
      rgb[i * 3 + 1] = pixels[i * channels + 1]!;
      rgb[i * 3 + 2] = pixels[i * channels + 2]!;
    }
  }
  return { rgb, width, height };
}

function imagesUnder(folder: string): Sample[] {
  const samples: Sample[] = [];
  const walk = (at: string, inherited: ExpressionClass | undefined) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) {
        walk(path, labelOf(name) ?? inherited);
        continue;
      }
      if (!/^\.(jpe?g|png)$/i.test(extname(name))) continue;
      const label = inherited ?? labelOf(basename(name));
      if (label) samples.push({ label, source: path, image: decodeImage(path) });
    }
  };
  walk(folder, undefined);
  return samples;
}

function testPhotos(): Sample[] {
  return EXPRESSION_CLASSES.map((label) => {
    const source = join(tooling.mediaDir, 'faces', `${label}.jpg`);
    return { label, source, image: decodeImage(source) };
  });
}

// ---- augmentation and frames ----

interface Variant {
  /** Degrees, clockwise. */
  rotation: number;
  /** Of the fitted size. */
  scale: number;
  brightness: number;
  mirror: boolean;
}

function variants(): Variant[] {
  if (dir && !augmentDir) return [{ rotation: 0, scale: 1, brightness: 1, mirror: false }];
  const rotations = quick ? [-15, 0, 15] : [-20, -10, 0, 10, 20];
  const scales = [1, 0.5];
  const brightnesses = quick ? [1] : [0.6, 1, 1.4];
  const mirrors = quick ? [false] : [false, true];
  const all: Variant[] = [];
  for (const rotation of rotations)
    for (const scale of scales)
      for (const brightness of brightnesses)
        for (const mirror of mirrors) all.push({ rotation, scale, brightness, mirror });
  return all;
}

/** Halves the image (2x2 means) while `scale` is below one half, so the last resampling never skips pixels; returns the scale left. */
function shrink(image: Image, scale: number): { image: Image; scale: number } {
  const halvings = scale >= 0.5 ? 0 : Math.ceil(-Math.log2(scale)) - 1;
  const cached = shrunk.get(image)?.get(halvings);
  if (cached) return { image: cached, scale: scale * 2 ** halvings };
  let current = image;
  let left = scale;
  while (left < 0.5) {
    const width = current.width >> 1;
    const height = current.height >> 1;
    const rgb = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        for (let c = 0; c < 3; c++) {
          const at = (row: number, col: number) => current.rgb[(row * current.width + col) * 3 + c]!;
          rgb[(y * width + x) * 3 + c] = (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1) + 2) >> 2;
        }
    current = { rgb, width, height };
    left *= 2;
  }
  if (!shrunk.has(image)) shrunk.set(image, new Map());
  shrunk.get(image)!.set(halvings, current);
  return { image: current, scale: left };
}
/** Halved copies of each image by number of halvings: made once, not once per frame. */
const shrunk = new WeakMap<Image, Map<number, Image>>();

/** One frame: the image, augmented and jittered, centred on a grey 640x360 picture. */
function renderFrame(source: Image, variant: Variant, next: () => number): Uint8Array {
  const fitted = Math.min((FIT * FRAME_WIDTH) / source.width, (FIT * FRAME_HEIGHT) / source.height) * variant.scale;
  const { image, scale } = shrink(source, fitted);
  const angle = ((variant.rotation + (next() - 0.5)) * Math.PI) / 180;
  const shiftX = (next() - 0.5) * 4;
  const shiftY = (next() - 0.5) * 4;
  const brightness = variant.brightness * (1 + (next() - 0.5) * 0.06);
  const cos = Math.cos(angle) / scale;
  const sin = Math.sin(angle) / scale;
  const out = new Uint8Array(FRAME_WIDTH * FRAME_HEIGHT * 3);
  const cx = FRAME_WIDTH / 2 + shiftX;
  const cy = FRAME_HEIGHT / 2 + shiftY;
  const { rgb, width, height } = image;
  // Sensor noise: a fixed table of values, read from a random start each frame.
  const noiseStart = Math.floor(next() * NOISE.length);
  let noiseAt = noiseStart;
  for (let y = 0; y < FRAME_HEIGHT; y++) {
    const dy = y + 0.5 - cy;
    for (let x = 0; x < FRAME_WIDTH; x++) {
      // Inverse rotation and scale: frame pixel centre -> image coordinates.
      const dx = x + 0.5 - cx;
      let sx = dx * cos + dy * sin + width / 2 - 0.5;
      const sy = -dx * sin + dy * cos + height / 2 - 0.5;
      if (variant.mirror) sx = width - 1 - sx;
      const at = (y * FRAME_WIDTH + x) * 3;
      noiseAt = noiseAt + 1 === NOISE.length ? 0 : noiseAt + 1;
      const noise = NOISE[noiseAt]!;
      if (sx < 0 || sy < 0 || sx > width - 1 || sy > height - 1) {
        out[at] = out[at + 1] = out[at + 2] = 128 + noise;
        continue;
      }
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const x1 = x0 + 1 < width ? x0 + 1 : x0;
      const y1 = y0 + 1 < height ? y0 + 1 : y0;
      const wx = sx - x0;
      const wy = sy - y0;
      const a = (y0 * width + x0) * 3;
      const b = (y0 * width + x1) * 3;
      const c = (y1 * width + x0) * 3;
      const d = (y1 * width + x1) * 3;
      for (let ch = 0; ch < 3; ch++) {
        const top = rgb[a + ch]! + (rgb[b + ch]! - rgb[a + ch]!) * wx;
        const bottom = rgb[c + ch]! + (rgb[d + ch]! - rgb[c + ch]!) * wx;
        const value = (top + (bottom - top) * wy) * brightness + noise;
        out[at + ch] = value < 0 ? 0 : value > 255 ? 255 : value;
      }
    }
  }
  return out;
}

const NOISE = (() => {
  const next = seededRandom(7);
  // Roughly normal (sum of three uniforms), standard deviation about 2 grey levels.
  return Float32Array.from({ length: 65521 }, () => (next() + next() + next() - 1.5) * 4);
})();

// ---- the run ----

const samples = dir ? imagesUnder(dir) : testPhotos();
if (samples.length === 0) throw new Error(`no labelled images under ${dir}`);
const grid = variants();
// Clips in an order that changes the label from one clip to the next, as often as the set allows.
const clips = grid.flatMap((variant) => samples.map((sample) => ({ sample, variant })));

const { faces: service } = await loadAnalysisModels(config.modelsDir);
const secondClassifier = await loadSecondClassifier(config.modelsDir);

/**
 * YuNet once per frame for all configurations: they all see the same frame object, and the
 * detector answers the same for the same pixels, so each configuration gets exactly the faces
 * it would get on its own; only the repeated work is saved.
 */
class SharedDetector extends FaceDetector {
  private last: { rgb: Uint8Array; faces: Promise<Face[]> } | undefined;
  override detectFaces(rgb: Uint8Array, width: number, height: number): Promise<Face[]> {
    if (this.last?.rgb !== rgb) this.last = { rgb, faces: super.detectFaces(rgb, width, height) };
    return this.last.faces;
  }
}
const detectorModel = await loadModel(join(config.modelsDir, MODEL_FILES.faceDetector));
// One shared detector per detection width the configurations use.
const detectors = new Map<number, SharedDetector>();
function detectorFor(settings: ExpressionVariant): SharedDetector {
  const width = settings.detectionWidth ?? 0;
  let detector = detectors.get(width);
  if (!detector) detectors.set(width, (detector = new SharedDetector(detectorModel, undefined, width)));
  return detector;
}
/** The tracker's memory in frames (actors/face/analyzer.ts), after which smoothing forgets a track. */
const forgetAfterFrames = Math.max(1, Math.round(2 * config.analysisFps)) + 1;
function analyzerOptions(configuration: Configuration) {
  const { settings } = configuration;
  const models = { ...service, detector: detectorFor(settings) };
  // The diagnostics: the mini-Xception in face-api's place, or face-api's net on another framing.
  const alone = configuration.secondOnly
    ? { classifier: secondClassifier, zoom: MINI_XCEPTION_ZOOM }
    : configuration.zoom ? { classifier: service.classifier, zoom: configuration.zoom } : undefined;
  const expressions = alone
    ? new VariantReader(settings, [alone], forgetAfterFrames)
    : VariantReader.of(settings, service, secondClassifier, forgetAfterFrames);
  return { models, expressions, effort: heldEffort(settings) };
}

const CLASS_OF_EMOTION = Object.fromEntries(EXPRESSION_CLASSES.map((cls) => [EMOTION_OF_CLASS[cls], cls])) as Record<EmotionKey, ExpressionClass>;
const runs = configurations.map((configuration) => {
  const rows: FaceSecond[] = [];
  const analyzer = new FaceAnalyzer({ session: SESSION, ...analyzerOptions(configuration), fps: config.analysisFps, onFaceSecond: (row) => rows.push(row), onVideoSecond: () => {} });
  return { configuration, analyzer, rows };
});

const fps = config.analysisFps;
const framesPerClip = Math.round(seconds * fps);
console.log(
  `${samples.length} labelled image(s) x ${grid.length} variant(s) = ${clips.length} clips of ${seconds} s at ${fps} fps ` +
    `(${clips.length * framesPerClip} frames), ${configurations.length} configurations`,
);
const started = performance.now();
const next = seededRandom(20240611);
let frameIndex = 0;
for (const [clipIndex, { sample, variant }] of clips.entries()) {
  for (let f = 0; f < framesPerClip; f++, frameIndex++) {
    const rgb = renderFrame(sample.image, variant, next);
    const second = Math.floor(frameIndex / fps);
    for (const run of runs) run.analyzer.offer({ rgb, width: FRAME_WIDTH, height: FRAME_HEIGHT, second });
    await Promise.all(runs.map((run) => run.analyzer.idle()));
  }
  if ((clipIndex + 1) % 50 === 0) console.log(`  ${clipIndex + 1}/${clips.length} clips, ${fixed((performance.now() - started) / 1000, 0)} s`);
}
await Promise.all(runs.map((run) => run.analyzer.flush()));

// ---- scores ----

const classCount = EXPRESSION_CLASSES.length;
interface Score {
  name: string;
  settings: ExpressionVariant;
  /** A diagnostic (another classifier, another framing), not settings the service runs. */
  diagnostic: boolean;
  scored: number;
  correct: number;
  noFace: number;
  accuracy: number;
  recall: Record<ExpressionClass, number>;
  /** confusion[true][predicted], EXPRESSION_CLASSES order. */
  confusion: number[][];
  /** Top-1 among the face-seconds of each value of an augmentation (rotation, scale, ...). */
  byVariant: Record<string, Record<string, number>>;
  /** Each scored face-second: its image, label and probabilities (EMOTION_KEYS order), for fitting (ops/bench/expression-fit.ts). */
  faceSeconds: { source: string; label: ExpressionClass; probabilities: number[] }[];
}
const totalSeconds = Math.ceil((clips.length * framesPerClip) / fps);
const clipOfSecond = (second: number) => clips[Math.floor((second * fps) / framesPerClip)]!;
const VARIANT_KEYS = ['rotation', 'scale', 'brightness', 'mirror'] as const;
const scores: Score[] = runs.map(({ configuration, rows }) => {
  const main = new Map<number, FaceSecond>();
  for (const row of rows) {
    const held = main.get(row.second);
    if (!held || row.frames > held.frames) main.set(row.second, row);
  }
  const confusion = EXPRESSION_CLASSES.map(() => new Array<number>(classCount).fill(0));
  const tally = Object.fromEntries(VARIANT_KEYS.map((key) => [key, new Map<string, { correct: number; scored: number }>()]));
  let noFace = 0;
  const faceSeconds: Score['faceSeconds'] = [];
  for (let second = 0; second < totalSeconds; second++) {
    const row = main.get(second);
    if (!row) {
      noFace++;
      continue;
    }
    const { sample, variant } = clipOfSecond(second);
    const predicted = CLASS_OF_EMOTION[row.dominant];
    faceSeconds.push({ source: sample.source, label: sample.label, probabilities: row.probabilities });
    confusion[EXPRESSION_CLASSES.indexOf(sample.label)]![EXPRESSION_CLASSES.indexOf(predicted)]!++;
    for (const key of VARIANT_KEYS) {
      const counts = tally[key]!.get(String(variant[key])) ?? { correct: 0, scored: 0 };
      counts.scored++;
      if (predicted === sample.label) counts.correct++;
      tally[key]!.set(String(variant[key]), counts);
    }
  }
  const byVariant = Object.fromEntries(
    VARIANT_KEYS.map((key) => [key, Object.fromEntries([...tally[key]!].map(([value, { correct, scored }]) => [value, correct / scored]))]),
  );
  const scored = confusion.flat().reduce((a, b) => a + b, 0);
  const correct = confusion.reduce((sum, row, i) => sum + row[i]!, 0);
  const recall = Object.fromEntries(
    EXPRESSION_CLASSES.map((cls, i) => {
      const row = confusion[i]!;
      const total = row.reduce((a, b) => a + b, 0);
      return [cls, total === 0 ? NaN : row[i]! / total];
    }),
  ) as Record<ExpressionClass, number>;
  return { name: configuration.name, settings: configuration.settings, diagnostic: !runnable(configuration), scored, correct, noFace, accuracy: correct / scored, recall, confusion, byVariant, faceSeconds };
});

const set = dir ? `labelled images under ${dir}${augmentDir ? ', augmented' : ''}` : `the project's ${samples.length} test photos, augmented (${quick ? 'quick grid' : 'full grid'})`;
printTable(
  `Top-1 accuracy per face-second: ${set}; ${totalSeconds} face-seconds; ${fixed((performance.now() - started) / 1000, 0)} s`,
  ['configuration', 'top-1', 'macro recall', ...EXPRESSION_CLASSES, 'no face'],
  scores.map((score) => [
    score.name + (sameSettings(score.settings, SERVICE_VARIANT) && !score.diagnostic ? ' [the service]' : ''),
    fixed(score.accuracy, 3),
    fixed(EXPRESSION_CLASSES.reduce((sum, cls) => sum + (Number.isNaN(score.recall[cls]) ? 0 : score.recall[cls]), 0) / EXPRESSION_CLASSES.filter((cls) => !Number.isNaN(score.recall[cls])).length, 3),
    ...EXPRESSION_CLASSES.map((cls) => fixed(score.recall[cls], 2)),
    String(score.noFace),
  ]),
);
for (const key of VARIANT_KEYS) {
  const values = [...new Set(grid.map((variant) => String(variant[key])))];
  if (values.length < 2) continue;
  printTable(
    `Top-1 by ${key} of the augmentation`,
    ['configuration', ...values.map((value) => `${key} ${value}`)],
    scores.map((score) => [score.name, ...values.map((value) => fixed(score.byVariant[key]![value]!, 3))]),
  );
}
for (const score of scores) {
  printTable(
    `Confusion, ${score.name} (rows: true class, columns: predicted; face-seconds)`,
    ['true \\ predicted', ...EXPRESSION_CLASSES],
    score.confusion.map((row, i) => [EXPRESSION_CLASSES[i]!, ...row.map(String)]),
  );
}
if (jsonOut) {
  writeFileSync(jsonOut, JSON.stringify({ set, seconds, fps, clips: clips.length, emotionKeys: EMOTION_KEYS, classes: EXPRESSION_CLASSES, scores }, null, 2));
  console.log(`scores written to ${jsonOut}`);
}
