// The test media (face photos, speech) the tests and benchmarks need, declared like the models
// (actors/models/manifest.ts): where each file goes, its sha256, and its sources in order.
import { MIRROR, type AssetEntry } from '../../actors/models/manifest.ts';

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
