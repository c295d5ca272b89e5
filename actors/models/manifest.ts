// Every model file the service needs and is not in the repository: where it goes, what it must
// hash to, and where it comes from, most preferred source first. It lives with the models because
// the actor host checks them against it at start; the setup tool (ops/assets) installs from it,
// trying the sources in order and keeping the first file whose sha256 is accepted.
import { MODEL_FILES } from './files.ts';

export type AssetFolder = 'models' | 'media';

export type AssetSource =
  /** A file of the same base name anywhere under one of the ASSETS_MIRROR folders. */
  | { kind: 'mirror' }
  /** A file inside a package tarball from the npm registry; `path` is relative to the package root. */
  | { kind: 'npm'; pkg: string; version: string; path: string }
  /** A file inside a Debian package from the archive apt is configured for; `path` is where it installs, from `/`. */
  | { kind: 'deb'; pkg: string; version: string; path: string }
  /** A plain download. */
  | { kind: 'url'; url: string }
  /** Built locally by a named recipe: the service's in ops/assets/recipes.ts, or one its installer is given. */
  | { kind: 'build'; recipe: string };

export interface AssetEntry {
  folder: AssetFolder;
  /** Path relative to the folder, with `/` separators. */
  file: string;
  /** Accepted sha256 digests (lowercase hex); any one of them makes the file valid. */
  sha256: readonly string[];
  /** Size of the reference file, for messages and progress. */
  bytes: number;
  sources: readonly AssetSource[];
}

const MOONSHINE = { pkg: '@moonshine-ai/moonshine-js', version: '0.1.29' } as const;
/**
 * The last releases of Moonshine's JavaScript package that ship the English base model (MIT);
 * later ones ship a Spanish base model with a non-commercial licence in its place.
 */
const MOONSHINE_WITH_BASE = { pkg: '@usefulsensors/moonshine-js', version: '0.1.16' } as const;
export const MIRROR = { kind: 'mirror' } as const;

export const MODEL_ASSETS: readonly AssetEntry[] = [
  {
    folder: 'models',
    file: MODEL_FILES.faceDetector,
    sha256: ['daede24002cc8590f457998cc5e6c9e8b82f45f6bd969506a8913cd4ed10a2d3'],
    bytes: 237823,
    sources: [
      MIRROR,
      { kind: 'url', url: 'https://github.com/ShiqiYu/libfacedetection.train/raw/0047ac24/onnx/yunet_s_dynamic.onnx' },
    ],
  },
  {
    folder: 'models',
    file: MODEL_FILES.expressions,
    // The reference conversion, and the output of the project's own converter (deterministic;
    // equal to the reference within 3e-6 on every probability).
    sha256: [
      '53511424e042caa513a3893cc93b5633d991f2124968cd1b099a4cdbc5561db0',
      '010bc5f126c776fb2abd23ae4604be5e382b1b3f28c264d2c1de421af27821e1',
    ],
    bytes: 1302751,
    sources: [MIRROR, { kind: 'build', recipe: 'faceExpressionOnnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.voiceActivity,
    sha256: ['1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3'],
    bytes: 2327524,
    sources: [MIRROR, { kind: 'npm', pkg: '@ricky0123/vad-web', version: '0.0.31', path: 'dist/silero_vad_v6.onnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.speechTinyEncoder,
    sha256: ['c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a'],
    bytes: 7937661,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE, path: 'dist/model/tiny/quantized/encoder_model.onnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.speechTinyDecoder,
    sha256: ['eed87831c3a6103534aae7d47a5d485025c659a1323901513961c39fe8a1a367'],
    bytes: 20243286,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE, path: 'dist/model/tiny/quantized/decoder_model_merged.onnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.speechBaseEncoder,
    sha256: ['1dd9ab0a7f987113d30affcba5a068d11c8f90fa0223caa3e491ade431ad9751'],
    bytes: 20513063,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE_WITH_BASE, path: 'dist/model/base/quantized/encoder_model.onnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.speechBaseDecoder,
    sha256: ['cc9f3cd6698a369c6008b41aa60aa3fb3322e7f03c9bdf19d8e6b7200afca4f3'],
    bytes: 42498870,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE_WITH_BASE, path: 'dist/model/base/quantized/decoder_model_merged.onnx' }],
  },
];
