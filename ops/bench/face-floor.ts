// The smallest face each step of the face effort still finds: four people's faces at several
// widths in 1280x720 (ops/support/four-faces.ts), scaled to the 640 px analysis frame as the
// ingest does, detected at full size and at each lighter step's width. Prints, per face width,
// the faces found, those sure enough to start a track (score >= 0.75, tracker.ts) and their
// widths in YuNet's picture: what MIN_DETECTABLE_FACE_PX (actors/face/face-effort.ts) rests on.
//   node --import tsx ops/bench/face-floor.ts [--widths 24 28 32 36 40 44 48]
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { detectionSize, FACE_EFFORT_LADDER, loadAnalysisModels } from '../../actors/face/index.ts';
import { analysisSize, scaleFilter } from '../../actors/ingest/index.ts';
import { readConfig } from '../../bus/index.ts';
import { readOpsConfig } from '../ops-config.ts';
import { FOUR_FACES_FRAME, writeFourFaces } from '../support/four-faces.ts';
import { printTable } from './lib/stats.ts';

const run = promisify(execFile);
const config = readConfig();
const tooling = readOpsConfig();
/** The score at which a face starts a track (actors/face/tracker.ts). */
const TRACK_START = 0.75;

const at = process.argv.indexOf('--widths');
const widths = at < 0 ? [24, 28, 32, 36, 40, 44, 48] : process.argv.slice(at + 1).map(Number);
const dir = join(config.varDir, 'bench', 'face-floor');
mkdirSync(dir, { recursive: true });
const { faces: models } = await loadAnalysisModels(config.modelsDir);
const frame = analysisSize(FOUR_FACES_FRAME);
const rows: string[][] = [];
for (const faceWidth of widths) {
  const picture = join(dir, `four-faces-${faceWidth}px.png`);
  await writeFourFaces(models.detector, faceWidth, picture, tooling.mediaDir, config.ffmpegPath);
  const { stdout } = await run(config.ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-i', picture, '-vf', scaleFilter(), '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 24 });
  const rgb = new Uint8Array(stdout);
  const cells = [`${faceWidth} px`];
  for (const { detectionWidth } of FACE_EFFORT_LADDER) {
    const found = await models.detector.detectFaces(rgb, frame.width, frame.height, detectionWidth);
    const scale = detectionSize(frame, detectionWidth).width / frame.width;
    const sizes = found.map((face) => face.width * scale).sort((a, b) => a - b);
    const sure = found.filter((face) => face.score >= TRACK_START).length;
    cells.push(found.length === 0 ? '0' : `${found.length}, ${sure} sure; ${sizes[0]!.toFixed(1)}-${sizes.at(-1)!.toFixed(1)} px`);
  }
  rows.push(cells);
}
printTable(
  `four faces in ${FOUR_FACES_FRAME.width}x${FOUR_FACES_FRAME.height}, analysed at ${frame.width}x${frame.height}: faces found, sure enough to start a track, their widths in YuNet's picture`,
  ['face width in 1280x720', ...FACE_EFFORT_LADDER.map(({ detectionWidth }) => (detectionWidth === 0 ? `full (${frame.width} px)` : `${detectionWidth} px`))],
  rows,
);
