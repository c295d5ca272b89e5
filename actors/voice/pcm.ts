// ffmpeg writes 16 kHz mono s16le; pipe chunks have any length, so a sample may straddle two.
export const SAMPLE_RATE = 16000;

/** Decodes s16le chunks into floats in -1..1, carrying a split sample over to the next chunk. */
export class S16Decoder {
  private output = new Float32Array(8192);
  private carry = -1; // low byte of a sample whose high byte is in the next chunk

  /** The chunk's complete samples; the array is reused and valid until the next call. */
  decode(chunk: Buffer): Float32Array {
    let offset = 0;
    let count = 0;
    const needed = (chunk.length + 1) >> 1;
    if (this.output.length < needed) this.output = new Float32Array(needed * 2);
    const output = this.output;
    if (this.carry >= 0 && chunk.length > 0) {
      output[count++] = (((chunk[0]! << 24) >> 16) | this.carry) / 32768;
      this.carry = -1;
      offset = 1;
    }
    const end = offset + ((chunk.length - offset) & ~1);
    for (let i = offset; i < end; i += 2) output[count++] = chunk.readInt16LE(i) / 32768;
    if (end < chunk.length) this.carry = chunk[end]!;
    return output.subarray(0, count);
  }
}
