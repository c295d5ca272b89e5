// Test speech from MEDIA_DIR (ops/ops-config.ts), read without any audio library.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readOpsConfig } from '../ops-config.ts';

const tooling = readOpsConfig();

/** The PCM bytes of a 16 kHz mono s16le WAV file (the `data` chunk, wherever it sits). */
export function wavPcm(wav: Buffer): Buffer {
  if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') throw new Error('not a RIFF WAVE file');
  let format: { channels: number; rate: number; bits: number } | undefined;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') format = { channels: wav.readUInt16LE(body + 2), rate: wav.readUInt32LE(body + 4), bits: wav.readUInt16LE(body + 14) };
    if (id === 'data') {
      if (format?.channels !== 1 || format.rate !== SAMPLE_RATE || format.bits !== 16) throw new Error(`expected 16 kHz mono s16, got ${JSON.stringify(format)}`);
      return wav.subarray(body, body + size);
    }
    at = body + size + (size & 1); // chunks are word-aligned
  }
  throw new Error('no data chunk');
}

/** The rate of every voice file the tests and benchmarks read. */
export const SAMPLE_RATE = 16000;

export const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';

/** JFK's "ask not" sentence: 11 s of 16 kHz mono s16le. */
export async function jfkPcm(): Promise<Buffer> {
  return wavPcm(await readFile(join(tooling.mediaDir, 'speech', 'jfk.wav')));
}

export function pcmToFloat(pcm: Buffer): Float32Array {
  const samples = new Float32Array(pcm.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(2 * i) / 32768;
  return samples;
}

/** Floats in -1..1 as s16le PCM, the format ffmpeg hands the voice actor. */
export function toPcm(samples: Float32Array): Buffer {
  const pcm = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), 2 * i);
  return pcm;
}
