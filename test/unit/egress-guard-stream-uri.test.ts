// The egress guard hands a decoder its stream URI from the environment in place of the
// placeholder on its command line, before main() reads its arguments, and wipes the variable;
// a placeholder without a URI ends the process (actors/egress/guard.c). The guard as built by
// ops/setup.sh, preloaded into sh, ffmpeg and ffprobe.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { readConfig } from '../../bus/config.ts';
import { ffprobePath } from '../../actors/ingest/ffmpeg-args.ts';
import { STREAM_URI_VARIABLE } from '../../actors/ingest/stream-address.ts';

const config = readConfig();
const URI = 'rtmp://user:pass-XYZ@127.0.0.1:1935/live/key-XYZ';
const PLACEHOLDER = 'emo-stream:s1:rtmp://127.0.0.1:1935';

function run(file: string, args: string[], extra: Record<string, string>) {
  const result = spawnSync(file, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LD_PRELOAD: config.egressGuardLibrary, ...extra } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('the program reads the URI where its command line has the placeholder', () => {
  const result = run('sh', ['-c', 'printf %s "$1"', 'sh', PLACEHOLDER], { [STREAM_URI_VARIABLE]: URI });
  assert.is(result.stdout, URI, result.stderr);
});

test("/proc shows the placeholder, and neither the URI nor its variable, in the process's memory or its children's", () => {
  const script = 'tr "\\0" " " </proc/$$/cmdline; echo; tr "\\0" " " </proc/$$/environ; echo; env';
  const result = run('sh', ['-c', script, 'sh', PLACEHOLDER], { [STREAM_URI_VARIABLE]: URI, KEPT: 'yes' });
  const [commandLine, environment, childEnvironment] = result.stdout.split('\n', 3);
  assert.ok(commandLine?.includes(PLACEHOLDER), commandLine);
  for (const [what, text] of [['command line', commandLine], ['environment memory', environment], ["child's environment", childEnvironment]]) {
    assert.not.ok(text?.includes('XYZ'), `${what}: ${text}`);
    assert.not.ok(text?.includes(STREAM_URI_VARIABLE), `${what}: ${text}`);
  }
  assert.ok(environment?.includes('KEPT=yes'), 'the rest of the environment stays');
});

test('a placeholder without a URI ends the process before main', () => {
  for (const extra of [{}, { [STREAM_URI_VARIABLE]: '' }] as Record<string, string>[]) {
    const result = run('sh', ['-c', 'echo ran', 'sh', PLACEHOLDER], extra);
    assert.is(result.status, 3);
    assert.is(result.stdout, '');
    assert.match(result.stderr, /^egress guard: no stream URI handed over/);
  }
});

test('without a placeholder the command line is left alone, and the variable still wiped', () => {
  const result = run('sh', ['-c', 'printf "%s " "$1"; env', 'sh', 'plain'], { [STREAM_URI_VARIABLE]: URI });
  assert.is(result.status, 0);
  assert.ok(result.stdout.startsWith('plain '), result.stdout);
  assert.not.ok(result.stdout.includes('XYZ'), result.stdout);
});

test('ffmpeg and ffprobe parse the URI, not the placeholder, as their input', () => {
  // lavfi's source description stands for the URI: opening it works only if it was handed over.
  const source = { [STREAM_URI_VARIABLE]: 'testsrc=size=64x48:rate=5:duration=1' };
  const ffmpeg = run(config.ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'emo-stream:s1:lavfi', '-f', 'null', '-'], source);
  assert.is(ffmpeg.status, 0, ffmpeg.stderr);
  const ffprobe = run(ffprobePath(config.ffmpegPath), ['-loglevel', 'error', '-f', 'lavfi', '-i', 'emo-stream:s1:lavfi', '-of', 'json', '-show_entries', 'stream=width'], source);
  assert.is(ffprobe.status, 0, ffprobe.stderr);
  assert.match(ffprobe.stdout, /"width": 64/);
  // Without it, the same command line opens nothing.
  assert.is.not(run(config.ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'emo-stream:s1:lavfi', '-f', 'null', '-'], {}).status, 0);
});

test.run();
