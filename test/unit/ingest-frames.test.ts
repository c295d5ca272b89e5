// Cutting the raw video pipe into whole frames, whatever the chunk boundaries.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FrameAssembler } from '../../actors/ingest/frame-assembler.ts';

function byteStream(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
  return bytes;
}

test('frames come out whole and in order for any chunking', () => {
  const frameBytes = 6 * 4 * 3;
  const stream = byteStream(frameBytes * 5 + 10);
  for (const chunkSize of [1, 7, frameBytes - 1, frameBytes, frameBytes + 1, 2 * frameBytes + 5, stream.length]) {
    const frames: Uint8Array[] = [];
    const assembler = new FrameAssembler(frameBytes, (frame) => frames.push(frame));
    for (let at = 0; at < stream.length; at += chunkSize) assembler.push(stream.subarray(at, at + chunkSize));
    assert.is(frames.length, 5, `chunks of ${chunkSize}`);
    frames.forEach((frame, n) => {
      assert.equal(frame, stream.subarray(n * frameBytes, (n + 1) * frameBytes), `frame ${n}, chunks of ${chunkSize}`);
    });
  }
});

test('each frame is its own buffer, untouched by later input', () => {
  const frames: Uint8Array[] = [];
  const assembler = new FrameAssembler(4, (frame) => frames.push(frame));
  assembler.push(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9));
  const first = Uint8Array.from(frames[0] ?? []);
  assembler.push(Uint8Array.of(10, 11, 12));
  assert.is(frames.length, 3);
  assert.equal(frames[0], first);
  assert.is.not(frames[0]?.buffer, frames[1]?.buffer);
  assert.equal(frames[2], Uint8Array.of(9, 10, 11, 12));
});

test('rejects a frame size that is not a positive integer', () => {
  for (const size of [0, -3, 1.5, Number.NaN]) assert.throws(() => new FrameAssembler(size, () => {}));
});

test.run();
