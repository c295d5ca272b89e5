// Cuts ffmpeg's video pipe into frames. Each frame is a binary PPM image as ffmpeg's encoder
// writes it, "P6\n<width> <height>\n255\n" then width x height x 3 bytes of RGB, so its size is
// read from ffmpeg's own output. Pipe chunks fall anywhere relative to frame boundaries; each
// frame is a fresh buffer the receiver may keep. Never throws: a pipe that is not what was
// expected stops the assembler and is reported once, as our words.
import type { FrameSize } from './ffmpeg-args.ts';

export interface Frame extends FrameSize {
  rgb: Uint8Array;
}

// Exactly what ffmpeg's PPM encoder writes for rgb24.
const HEADER = /^P6\n(\d{1,5}) (\d{1,5})\n255\n$/;
// "P6\n65535 65535\n255\n" is 19 bytes; a longer header is not one.
const MAX_HEADER_BYTES = 19;

export class FrameAssembler {
  private header = '';
  private frame: Uint8Array | undefined;
  private filled = 0;
  private problem: string | undefined;

  /** Every frame must be `size`: the size announced before the first frame. */
  constructor(
    private readonly size: FrameSize,
    private readonly onFrame: (frame: Frame) => void,
  ) {}

  /** Returns why the pipe cannot be read any further, once it cannot; frames stop there. */
  push(chunk: Uint8Array): string | undefined {
    let offset = 0;
    while (offset < chunk.length && !this.problem) {
      if (this.frame) offset = this.fill(chunk, offset);
      else offset = this.readHeader(chunk, offset);
    }
    return this.problem;
  }

  private readHeader(chunk: Uint8Array, offset: number): number {
    // One byte at a time: the header is the three first lines, and a few bytes long.
    for (; offset < chunk.length; offset++) {
      this.header += String.fromCharCode(chunk[offset]!);
      if (this.header.length > MAX_HEADER_BYTES) {
        this.problem = 'ffmpeg wrote a malformed frame';
        return offset + 1;
      }
      if (this.header.split('\n').length === 4) return this.startFrame(offset + 1);
    }
    return offset;
  }

  private startFrame(offset: number): number {
    const match = HEADER.exec(this.header);
    this.header = '';
    const width = Number(match?.[1]);
    const height = Number(match?.[2]);
    if (!(width > 0 && height > 0)) {
      this.problem = 'ffmpeg wrote a malformed frame';
      return offset;
    }
    if (width !== this.size.width || height !== this.size.height) {
      this.problem = 'picture size changed after probing';
      return offset;
    }
    this.frame = new Uint8Array(this.size.width * this.size.height * 3);
    this.filled = 0;
    return offset;
  }

  private fill(chunk: Uint8Array, offset: number): number {
    const frame = this.frame!;
    const take = Math.min(frame.length - this.filled, chunk.length - offset);
    frame.set(chunk.subarray(offset, offset + take), this.filled);
    this.filled += take;
    if (this.filled === frame.length) {
      this.frame = undefined;
      this.onFrame({ rgb: frame, width: this.size.width, height: this.size.height });
    }
    return offset + take;
  }
}
