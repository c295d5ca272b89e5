// The test media (face photos, speech) the tests and benchmarks need, declared like the models
// (actors/models/manifest.ts): where each file goes, its sha256, and its sources in order.
// Upstream URLs name a commit, so the bytes behind them cannot change.
import { MIRROR, type AssetEntry } from '../../actors/models/manifest.ts';

/** justadudewhohacks/face-api.js (MIT): its example and test photos. */
const FACE_API_RAW = 'https://raw.githubusercontent.com/justadudewhohacks/face-api.js/a86f011d72124e5fb93e59d5c4ab98f699dd5c9c';
/** ggerganov/whisper.cpp (MIT): the commit that added its JFK sample, which never changed since. */
const WHISPER_CPP_RAW = 'https://raw.githubusercontent.com/ggerganov/whisper.cpp/b0a11594aec50892a02cd8d129eee2dfe93a8bb8';
/** LCAV/pyroomacoustics (MIT) ships recorded speech for its examples; each file at a commit that holds it. */
const PYROOMACOUSTICS_RAW = 'https://raw.githubusercontent.com/LCAV/pyroomacoustics';

/**
 * Recorded voices of the speech-in-a-crowd benchmark (ops/bench/README-speech-crowd.md), 16 kHz
 * mono: read sentences of two CMU ARCTIC speakers (aew, axb) and four arctic prompts of a speaker
 * pyroomacoustics does not name (CMU ARCTIC: free for any use), and the 10-s sources of SiSec
 * 2011's underdetermined speech mixtures (dev1, four women and four men, each a different
 * person), seven of them the crowd.
 */
type CrowdFile = [name: string, commit: string, upstreamPath: string, sha256: string, bytes: number];
const ARCTIC_SENTENCES = '6fe43fecb7c358ac9aaa054e7e73641189f1afff';
const ARCTIC_A0007_A0009 = '4e12fe14485440eef713ee4269f28c6603834c4e';
const SISEC_2011_SPEECH = '4ac8f49ec9e48dab841b0429b7c183f1a379abf2';
const arctic = (name: string, sha256: string, bytes: number): CrowdFile => [`cmu_arctic_us_${name}.wav`, ARCTIC_SENTENCES, `examples/input_samples/cmu_arctic_us_${name}.wav`, sha256, bytes];
const sisec = (name: string, sha256: string): CrowdFile => [`dev1_${name}.wav`, SISEC_2011_SPEECH, `examples/input_samples/SiSec2011_Speech/dev1_${name}.wav`, sha256, 320044];

const CROWD_SPEECH: readonly CrowdFile[] = [
  arctic('aew_a0001', 'd7b3b0ee49a0dbd26ea813d220a2f8d252ab47eda15af06542d4d21ec1447228', 124206),
  arctic('aew_a0002', '40641becf36e6b65a3aabfd7299778bf2c67eaa8fc4ce097d5b63ff33d7096fa', 128686),
  arctic('aew_a0003', '9ab2f145deeebb375f47a93b6a45bf007962fde7402314b5a04a4d6318f6e93f', 113326),
  arctic('axb_a0004', '24612efb6612433a66b2327d2688740a966d00c2a4c8462fa3de80223f9d2bf2', 89804),
  arctic('axb_a0005', 'b87c4ba7d75e51b84ed86469f7a29eca99106e24f50d1f3043ab8984372b6211', 50126),
  arctic('axb_a0006', 'd1aa2fca52f5b0d3b918aea7ae7e4daf555f300f8ce749f5c9d851ae7f47f0c8', 113324),
  ['arctic_a0007.wav', ARCTIC_A0007_A0009, 'examples/input_samples/arctic_a0007.wav', '1b850392f8c87ee2efe5a686523f1bab61d2a38d59bc43d1127e17e406f9e57d', 128044],
  ['arctic_a0008.wav', ARCTIC_A0007_A0009, 'examples/input_samples/arctic_a0008.wav', '0b10f2d27ef3636491d04188332edea8cb2df7add13f43cca32c493b5fd31176', 128044],
  ['arctic_a0009.wav', ARCTIC_A0007_A0009, 'examples/input_samples/arctic_a0009.wav', '52424758f0624ce8442955db50209a4e4dc141c95c6a0a0ceca494464dcb73f9', 160044],
  ['arctic_a0010.wav', '2f97a0fa50a872402fd20f32337fa6a74764207c', 'notebooks/arctic_a0010.wav', '5a08beb1ad34e39c5d54927eef1ef45089049401ca7d8d05926677f196e622b3', 114124],
  sisec('female4_src_1', 'f7b18d4317365e6959ece0110b8807d525941105048798ac7afe64dacbe3aba8'),
  sisec('female4_src_2', '4a0231dbda274ab216393cfa2a0a230e648ded65fffad5567cf78e088b5c0d39'),
  sisec('female4_src_3', '62a4186daf3c3df631b03bb74b5536c388f187865b3f389815991594da493b21'),
  sisec('female4_src_4', '3b1e27403ab03c2d94f931842e01a1f9e465cd2d05c652ab732b5d267cd218a0'),
  sisec('male4_src_1', 'ad3f7253d659d7b37590c328910064cdb05bad8282d9e0eff05bea61bbf51e0a'),
  sisec('male4_src_2', 'f1e7a5bb22ef26de7a72e6a61b9f62e9219e2020cae68300bc5fb073de3aac3f'),
  sisec('male4_src_3', 'f224ed5aeb1eb3134039a5775989f35a63f55a6d02176b26969ba5046b05a6d6'),
];

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

/**
 * Benchmark media, beyond what the tests use: the speech-in-a-crowd voices
 * (ops/bench/README-speech-crowd.md), installed by the lab's setup (`npm run setup -w ops/bench`).
 */
export const BENCH_MEDIA_ASSETS: readonly AssetEntry[] = CROWD_SPEECH.map(([name, commit, upstreamPath, sha256, bytes]): AssetEntry => ({
  folder: 'media',
  file: `speech/${name}`,
  sha256: [sha256],
  bytes,
  sources: [MIRROR, { kind: 'url', url: `${PYROOMACOUSTICS_RAW}/${commit}/${upstreamPath}` }],
}));
