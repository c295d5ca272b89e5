// Speech for the audio benchmarks: the JFK sample, and longer passages spoken by espeak-ng and
// resampled by sox to the 16 kHz mono the pipeline receives.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SAMPLE_RATE, jfkPcm, pcmToFloat, toPcm, wavPcm } from '../../support/voice-media.ts';

const run = promisify(execFile);

export { SAMPLE_RATE, toPcm };

export async function jfkSamples(): Promise<Float32Array> {
  return pcmToFloat(await jfkPcm());
}

/** `text` spoken at 150 words a minute in espeak-ng's `voice`, as 16 kHz mono samples; scratch files go in `dir`. */
export async function spokenSamples(text: string, dir: string, name: string, voice = 'en-us'): Promise<Float32Array> {
  const raw = join(dir, `${name}.espeak.wav`);
  const wav = join(dir, `${name}.wav`);
  await run('espeak-ng', ['-v', voice, '-s', '150', '-w', raw, text]);
  await run('sox', [raw, '-r', String(SAMPLE_RATE), '-c', '1', '-b', '16', wav]);
  return pcmToFloat(wavPcm(await readFile(wav)));
}

/** Floats in -1..1 as a 16 kHz mono 16-bit WAV file. */
export function wavFile(samples: Float32Array): Buffer {
  const pcm = toPcm(samples);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** Any audio file ffmpeg reads, as 16 kHz mono samples. */
export async function decodedSamples(file: string, ffmpegPath: string): Promise<Float32Array> {
  const { stdout } = await run(ffmpegPath, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', file, '-ar', String(SAMPLE_RATE), '-ac', '1', '-f', 's16le', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 1 << 30,
  });
  return pcmToFloat(stdout);
}
