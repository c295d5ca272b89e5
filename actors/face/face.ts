// A face as the detector reports it, in frame pixels: what detection hands to tracking, cropping
// and scaling, none of which needs the detector itself.
import type { Box } from './box.ts';

export interface Face extends Box {
  score: number;
  /** Right eye, left eye, nose tip, right and left mouth corners, as [x, y] in frame pixels. */
  landmarks: [number, number][];
}
