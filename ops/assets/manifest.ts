// Every file the service needs and is not in the repository: where it goes, what it must hash to,
// and where it comes from, most preferred source first. Setup tries the sources in order and
// installs the first file whose sha256 is accepted.
import { MODEL_FILES } from '../../actors/models/files.ts';

export type AssetFolder = 'models' | 'media';

export type AssetSource =
  /** A file of the same base name anywhere under one of the ASSETS_MIRROR folders. */
  | { kind: 'mirror' }
  /** A file inside a package tarball from the npm registry; `path` is relative to the package root. */
  | { kind: 'npm'; pkg: string; version: string; path: string }
  /** A plain download. */
  | { kind: 'url'; url: string }
  /** Built locally by a named recipe (see recipes.ts). */
  | { kind: 'build'; recipe: 'faceExpressionOnnx' };

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
const MIRROR = { kind: 'mirror' } as const;

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
    file: MODEL_FILES.speechEncoder,
    sha256: ['c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a'],
    bytes: 7937661,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE, path: 'dist/model/tiny/quantized/encoder_model.onnx' }],
  },
  {
    folder: 'models',
    file: MODEL_FILES.speechDecoder,
    sha256: ['eed87831c3a6103534aae7d47a5d485025c659a1323901513961c39fe8a1a367'],
    bytes: 20243286,
    sources: [MIRROR, { kind: 'npm', ...MOONSHINE, path: 'dist/model/tiny/quantized/decoder_model_merged.onnx' }],
  },
];

const FACE_PHOTOS: ReadonlyArray<[name: string, sha256: string, bytes: number]> = [
  ['angry', '1aeb112239806c92d07888b558a915e277392d6dae85bbaf1b845fec3599ec2f', 7677],
  ['disgusted', 'a7345dc174063f9ef33534b55bab2d85c818f6417732d2cd932715f035236bc5', 29707],
  ['faces', '69a2f5949b21ec0b0a96a588efabc24ac23cfc8efefe6aa7eb31271dc552c6cf', 119432],
  ['fearful', 'fc37980c6278e1ff9489f6e4394884fc7e737d08fd1fd7b55ca5439fcaf87229', 4871],
  ['happy', '949361d1cbde49a8a71009136f9e484a28ae51a8cb97556c8bd73b91bc673bfe', 28555],
  ['neutral', '208f90fd0fef5840b77402e06a82fca144d1fdbb4c93a9aca1b5489687c074dd', 37376],
  ['sad', 'b820ed0309b176f5abf9ff5a241dc9e632bece07c474fa2434d53801abf87637', 19794],
  ['surprised', '67b2f530f9d82bfb5610a82b8cf069a73ab5524c488da80ab94c9fb48c483aef', 38476],
];

/** Test media: real speech and real faces for the tests that check the models end to end. */
export const MEDIA_ASSETS: readonly AssetEntry[] = [
  {
    folder: 'media',
    file: 'speech/jfk.wav',
    sha256: ['59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e'],
    bytes: 352078,
    sources: [MIRROR, { kind: 'url', url: 'https://github.com/ggerganov/whisper.cpp/raw/master/samples/jfk.wav' }],
  },
  ...FACE_PHOTOS.map(([name, sha256, bytes]): AssetEntry => ({
    folder: 'media',
    file: `faces/${name}.jpg`,
    sha256: [sha256],
    bytes,
    sources: [MIRROR],
  })),
];
