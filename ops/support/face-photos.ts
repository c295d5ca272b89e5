// Test photos as the ingest would deliver them: RGB24, longer side at most 640 px.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import { readOpsConfig } from '../ops-config.ts';
import { CROP_VALUES, cropFace, type FaceDetector } from '../../actors/face/index.ts';

const tooling = readOpsConfig();

export interface Photo {
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** The single-face photos, named after the expression they show, in the classifier's class order. */
export const EXPRESSION_PHOTOS = ['neutral', 'happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'] as const;

const MAX_SIDE = 640;

/** The face of each expression photo, detected and cropped as the analyser does, as one batch. */
export async function expressionPhotoCrops(detector: FaceDetector): Promise<Float32Array> {
  const batch = new Float32Array(EXPRESSION_PHOTOS.length * CROP_VALUES);
  for (const [slot, name] of EXPRESSION_PHOTOS.entries()) {
    const photo = loadPhoto(name);
    const [face] = await detector.detectFaces(photo.rgb, photo.width, photo.height);
    if (!face) throw new Error(`no face found in ${name}.jpg`);
    cropFace(photo.rgb, photo.width, photo.height, face, batch, slot);
  }
  return batch;
}

export function loadPhoto(name: string): Photo {
  const image = jpeg.decode(readFileSync(join(tooling.mediaDir, 'faces', `${name}.jpg`)), { useTArray: true, formatAsRGBA: false });
  const photo = { rgb: image.data, width: image.width, height: image.height };
  const scale = MAX_SIDE / Math.max(photo.width, photo.height);
  return scale < 1 ? resize(photo, Math.round(photo.width * scale), Math.round(photo.height * scale)) : photo;
}

function resize(src: Photo, width: number, height: number): Photo {
  const rgb = new Uint8Array(width * height * 3);
  const sx = src.width / width;
  const sy = src.height / height;
  for (let y = 0; y < height; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), src.height - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, src.height - 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), src.width - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, src.width - 1);
      const wx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const top = src.rgb[(y0 * src.width + x0) * 3 + c]! * (1 - wx) + src.rgb[(y0 * src.width + x1) * 3 + c]! * wx;
        const bottom = src.rgb[(y1 * src.width + x0) * 3 + c]! * (1 - wx) + src.rgb[(y1 * src.width + x1) * 3 + c]! * wx;
        rgb[(y * width + x) * 3 + c] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { rgb, width, height };
}
