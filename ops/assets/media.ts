// The test media (face photos, speech) the tests and benchmarks need, declared like the models
// (actors/models/manifest.ts): where each file goes, its sha256, and its sources in order.
// Upstream URLs name a commit, so the bytes behind them cannot change.
import { MIRROR, type AssetEntry } from '../../actors/models/manifest.ts';

/** justadudewhohacks/face-api.js (MIT): its example and test photos. */
const FACE_API_RAW = 'https://raw.githubusercontent.com/justadudewhohacks/face-api.js/a86f011d72124e5fb93e59d5c4ab98f699dd5c9c';
/** ggerganov/whisper.cpp (MIT): the commit that added its JFK sample, which never changed since. */
const WHISPER_CPP_RAW = 'https://raw.githubusercontent.com/ggerganov/whisper.cpp/b0a11594aec50892a02cd8d129eee2dfe93a8bb8';

/**
 * Debian's pocketsphinx test data (BSD-2; the recordings are LibriVox's, public domain): five
 * sentences of a reading of Sense and Sensibility, 16 kHz mono, with their transcript.
 */
const POCKETSPHINX_TESTDATA = { pkg: 'pocketsphinx-testdata', version: '0.8+5prealpha+1-15' } as const;
const LIBRIVOX_DIR = '/usr/share/pocketsphinx/test/data/librivox';

const LIBRIVOX_SENTENCES: ReadonlyArray<[name: string, sha256: string, bytes: number]> = [
  ['sense_and_sensibility_01_austen_64kb-0870.wav', 'b0557cf95c974d930577e58e46b7f068c432a6e3afcc286563d88922b2a5315c', 227244],
  ['sense_and_sensibility_01_austen_64kb-0880.wav', 'fbec491ef00ee734a67f0ee318e98c51c157b479e1629ff4f4426861ecac0414', 95724],
  ['sense_and_sensibility_01_austen_64kb-0890.wav', '5793ffbdee55fb8bfd284943a6866864c832d9d4accf2661cabd39915c84ee10', 169644],
  ['sense_and_sensibility_01_austen_64kb-0920.wav', '40882414ef4cc51f3ff7a63bad0c8c87e7f595ffeb8209fbf756c8ebc5c28a59', 193644],
  ['sense_and_sensibility_01_austen_64kb-0930.wav', '954adbf0b56ac8a148cbe77b39ca18d76b5f2a1e1f405565bd786ce3e68a68b7', 105324],
];

const FACE_PHOTOS: ReadonlyArray<[name: string, upstreamPath: string, sha256: string, bytes: number]> = [
  ['angry', 'examples/images/angry.jpg', '1aeb112239806c92d07888b558a915e277392d6dae85bbaf1b845fec3599ec2f', 7677],
  ['disgusted', 'examples/images/disgusted.jpg', 'a7345dc174063f9ef33534b55bab2d85c818f6417732d2cd932715f035236bc5', 29707],
  ['faces', 'test/images/faces.jpg', '69a2f5949b21ec0b0a96a588efabc24ac23cfc8efefe6aa7eb31271dc552c6cf', 119432],
  ['fearful', 'examples/images/fearful.jpg', 'fc37980c6278e1ff9489f6e4394884fc7e737d08fd1fd7b55ca5439fcaf87229', 4871],
  ['happy', 'examples/images/happy.jpg', '949361d1cbde49a8a71009136f9e484a28ae51a8cb97556c8bd73b91bc673bfe', 28555],
  ['neutral', 'examples/images/neutral.jpg', '208f90fd0fef5840b77402e06a82fca144d1fdbb4c93a9aca1b5489687c074dd', 37376],
  ['sad', 'examples/images/sad.jpg', 'b820ed0309b176f5abf9ff5a241dc9e632bece07c474fa2434d53801abf87637', 19794],
  ['surprised', 'examples/images/surprised.jpg', '67b2f530f9d82bfb5610a82b8cf069a73ab5524c488da80ab94c9fb48c483aef', 38476],
];

/** Test media: real speech and real faces for the tests that check the models end to end. */
export const MEDIA_ASSETS: readonly AssetEntry[] = [
  {
    folder: 'media',
    file: 'speech/jfk.wav',
    sha256: ['59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e'],
    bytes: 352078,
    sources: [MIRROR, { kind: 'url', url: `${WHISPER_CPP_RAW}/samples/jfk.wav` }],
  },
  ...LIBRIVOX_SENTENCES.map(([name, sha256, bytes]): AssetEntry => ({
    folder: 'media',
    file: `speech/${name}`,
    sha256: [sha256],
    bytes,
    sources: [MIRROR, { kind: 'deb', ...POCKETSPHINX_TESTDATA, path: `${LIBRIVOX_DIR}/${name}` }],
  })),
  ...FACE_PHOTOS.map(([name, upstreamPath, sha256, bytes]): AssetEntry => ({
    folder: 'media',
    file: `faces/${name}.jpg`,
    sha256: [sha256],
    bytes,
    sources: [MIRROR, { kind: 'url', url: `${FACE_API_RAW}/${upstreamPath}` }],
  })),
];
