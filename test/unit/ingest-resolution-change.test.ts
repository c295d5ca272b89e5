// A stream whose picture size changes mid-way: every frame on the pipe keeps the size the
// ingest announced at the start, so the run goes on (a PPM frame of another size would end it).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { analysisSize, buildIngestArgs } from '../../actors/ingest/ffmpeg-args.ts';
import { FrameAssembler } from '../../actors/ingest/frame-assembler.ts';
import { readConfig } from '../../bus/config.ts';

const config = readConfig();

const FPS = 4;
const SECONDS_EACH = 2;

/** An MPEG-TS file: 1280x720 for two seconds, then 640x480 for two seconds. */
function resolutionChangingFile(dir: string): string {
  const parts = ['1280x720', '640x480'].map((size, i) => {
    const file = join(dir, `part${i}.ts`);
    execFileSync(config.ffmpegPath, [
      '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=${SECONDS_EACH}`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-y', file,
    ]);
    return file;
  });
  const joined = join(dir, 'changing.ts');
  execFileSync(config.ffmpegPath, ['-v', 'error', '-i', `concat:${parts.join('|')}`, '-c', 'copy', '-y', joined]);
  return joined;
}

/** The ingest's own arguments, reading a local file instead of a network stream. */
function argsFor(file: string): string[] {
  const args = buildIngestArgs({ uri: 'rtmp://127.0.0.1/live/x', session: 's', fps: FPS, timeoutSeconds: 5, outputs: { video: 'pipe:1' } });
  const input = args.indexOf('-i');
  args[input + 1] = file;
  // A file, in MPEG-TS: neither its protocol nor its format is one a stream may use.
  for (const whitelist of ['-protocol_whitelist', '-format_whitelist']) args.splice(args.indexOf(whitelist), 2);
  // Drop the network-only timeout option that precedes the input.
  const timeout = args.indexOf('-rw_timeout');
  args.splice(timeout, 2);
  return args;
}

test('frames keep the first size after the stream changes resolution', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-resize-'));
  try {
    const file = resolutionChangingFile(dir);
    const child = spawn(config.ffmpegPath, argsFor(file), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr.resume();
    let frames = 0;
    const problems: string[] = [];
    const assembler = new FrameAssembler(analysisSize({ width: 1280, height: 720 }), () => frames++);
    child.stdout.on('data', (chunk: Buffer) => {
      const problem = assembler.push(chunk);
      if (problem && problems.length === 0) problems.push(problem);
    });
    await new Promise((resolve) => child.once('close', resolve));
    assert.equal(problems, [], 'every frame is 640x360');
    assert.ok(Math.abs(frames - 2 * SECONDS_EACH * FPS) <= 2, `${frames} frames`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
