// Cutting the video pipe (PPM images) into whole frames, whatever the chunk boundaries, and
// ending cleanly, never throwing, on anything that is not the announced frames.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { FrameAssembler, type Frame } from '../../actors/ingest/frame-assembler.ts';

const SIZE = { width: 6, height: 4 };
const PIXELS = SIZE.width * SIZE.height * 3;

function ppm(width: number, height: number, seed: number): Uint8Array {
  const header = Buffer.from(`P6\n${width} ${height}\n255\n`, 'latin1');
  const pixels = new Uint8Array(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7 + seed * 31) & 0xff;
  return new Uint8Array(Buffer.concat([header, pixels]));
}

const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

test('frames come out whole, sized and in order for any chunking', () => {
  const images = [0, 1, 2, 3, 4].map((seed) => ppm(SIZE.width, SIZE.height, seed));
  const stream = concat([...images, images[0]!.subarray(0, 20)]);
  for (const chunkSize of [1, 7, 13, PIXELS - 1, PIXELS, PIXELS + 14, 2 * PIXELS + 5, stream.length]) {
    const frames: Frame[] = [];
    const assembler = new FrameAssembler(SIZE, (frame) => frames.push(frame));
    for (let at = 0; at < stream.length; at += chunkSize) {
      assert.is(assembler.push(stream.subarray(at, at + chunkSize)), undefined, `chunks of ${chunkSize}`);
    }
    assert.is(frames.length, 5, `chunks of ${chunkSize}`);
    frames.forEach((frame, n) => {
      assert.is(frame.width, SIZE.width);
      assert.is(frame.height, SIZE.height);
      assert.equal(frame.rgb, images[n]!.subarray(images[n]!.length - PIXELS), `frame ${n}, chunks of ${chunkSize}`);
    });
  }
});

test('each frame is its own buffer, untouched by later input', () => {
  const frames: Frame[] = [];
  const assembler = new FrameAssembler(SIZE, (frame) => frames.push(frame));
  const stream = concat([ppm(6, 4, 1), ppm(6, 4, 2), ppm(6, 4, 3)]);
  assembler.push(stream.subarray(0, stream.length - 5));
  const first = Uint8Array.from(frames[0]?.rgb ?? []);
  assembler.push(stream.subarray(stream.length - 5));
  assert.is(frames.length, 3);
  assert.equal(frames[0]?.rgb, first);
  assert.is.not(frames[0]?.rgb.buffer, frames[1]?.rgb.buffer);
});

test('a frame of another size than announced stops the assembler, without throwing', () => {
  for (const [width, height] of [[4, 6], [640, 360], [65535, 65535], [6, 5]]) {
    const frames: Frame[] = [];
    const assembler = new FrameAssembler(SIZE, (frame) => frames.push(frame));
    const stream = concat([ppm(6, 4, 1), Buffer.from(`P6\n${width} ${height}\n255\n`), new Uint8Array(100)]);
    assert.is(assembler.push(stream), 'picture size changed after probing', `${width}x${height}`);
    assert.is(frames.length, 1);
    assert.is(assembler.push(ppm(6, 4, 2)), 'picture size changed after probing', 'stays stopped');
    assert.is(frames.length, 1);
  }
});

test('anything but a PPM header is malformed, a zero or oversized size included', () => {
  const headers = [
    'P6\n0 0\n255\n',
    'P6\n6 0\n255\n',
    'P5\n6 4\n255\n',
    'P6\n6 4\n65535\n',
    'P6 6 4 255\n',
    'P6\n-6 4\n255\n',
    'P6\n999999 4\n255\n',
    'P6\n6 4\n255  \n',
    'Output #0, rawvideo, to \'pipe:4\':\n',
    'x'.repeat(100),
  ];
  for (const header of headers) {
    for (const size of [SIZE, { width: 0, height: 0 }]) {
      const frames: Frame[] = [];
      const assembler = new FrameAssembler(size, (frame) => frames.push(frame));
      const problem = assembler.push(concat([Buffer.from(header, 'latin1'), new Uint8Array(PIXELS)]));
      assert.is(problem, 'ffmpeg wrote a malformed frame', JSON.stringify(header));
      assert.is(frames.length, 0);
    }
  }
});

test.run();
