// Cuts a byte stream into records of a fixed size (raw frames). Pipe chunks fall anywhere
// relative to frame boundaries; each completed frame is a fresh buffer the receiver may keep.

export class FrameAssembler {
  private frame: Uint8Array;
  private filled = 0;

  constructor(
    readonly frameBytes: number,
    private readonly onFrame: (frame: Uint8Array) => void,
  ) {
    if (!Number.isInteger(frameBytes) || frameBytes <= 0) {
      throw new Error(`frame size must be a positive integer, got ${frameBytes}`);
    }
    this.frame = new Uint8Array(frameBytes);
  }

  push(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(this.frameBytes - this.filled, chunk.length - offset);
      this.frame.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.frameBytes) {
        const done = this.frame;
        this.frame = new Uint8Array(this.frameBytes);
        this.filled = 0;
        this.onFrame(done);
      }
    }
  }
}
