// A still 1280x720 picture of four people with small faces: each expression photo's face cut
// square around YuNet's box (twice its width, so head and hair show) and scaled so the face is
// a given width, side by side on grey. For the face effort's floor (ops/bench/face-floor.ts)
// and its test (test/integration/face-effort-per-stream.test.ts).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FaceDetector } from '../../actors/face/index.ts';
import { loadPhoto } from './face-photos.ts';

const run = promisify(execFile);
export const FOUR_FACES_FRAME = { width: 1280, height: 720 };
const PEOPLE = ['happy', 'neutral', 'surprised', 'sad'] as const;

/** Writes the picture with faces `faceWidth` px wide to `path` (PNG); `mediaDir` holds faces/. */
export async function writeFourFaces(detector: FaceDetector, faceWidth: number, path: string, mediaDir: string, ffmpegPath: string): Promise<void> {
  const { width, height } = FOUR_FACES_FRAME;
  const inputs: string[] = [];
  const filters = [`color=c=0x808080:s=${width}x${height}:r=1[ground0]`];
  for (const [i, name] of PEOPLE.entries()) {
    const photo = loadPhoto(name);
    const [face] = await detector.detectFaces(photo.rgb, photo.width, photo.height);
    if (!face) throw new Error(`no face in ${name}.jpg`);
    const side = Math.min(Math.round(face.width * 2), photo.width, photo.height);
    const x = Math.min(Math.max(0, Math.round(face.x + face.width / 2 - side / 2)), photo.width - side);
    const y = Math.min(Math.max(0, Math.round(face.y + face.height / 2 - side / 2)), photo.height - side);
    inputs.push('-i', join(mediaDir, 'faces', `${name}.jpg`));
    filters.push(`[${i}:v]scale=${photo.width}:${photo.height},crop=${side}:${side}:${x}:${y},scale=${faceWidth * 2}:${faceWidth * 2}[face${i}]`);
    const at = { x: Math.round(((i + 1) * width) / (PEOPLE.length + 1) - faceWidth), y: Math.round(height / 2 - faceWidth) };
    filters.push(`[ground${i}][face${i}]overlay=${at.x}:${at.y}${i === PEOPLE.length - 1 ? '' : `[ground${i + 1}]`}`);
  }
  await run(ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-y', ...inputs, '-filter_complex', filters.join(';'), '-frames:v', '1', path]);
}
