// Stream info from ffprobe's JSON: real ffprobe output, and hostile or broken descriptions,
// which end in our words and never throw.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { ffprobePath } from '../../actors/ingest/ffmpeg-args.ts';
import { readProbeOutput } from '../../actors/ingest/stream-info.ts';
import { readConfig } from '../../bus/config.ts';

const config = readConfig();
const run = promisify(execFile);

/** ffprobe's description of a lavfi graph, with the entries the ingest asks for. */
async function describe(graph: string): Promise<string> {
  const { stdout } = await run(ffprobePath(config.ffmpegPath), [
    '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', graph, '-of', 'json', '-show_entries', 'stream=codec_type,width,height',
  ]);
  return stdout;
}

test('real ffprobe output: streams and picture size', async () => {
  const [both, mute, silent] = await Promise.all([
    describe('testsrc=size=1280x720[out0];sine=f=440[out1]'),
    describe('testsrc=size=480x640'),
    describe('sine=f=440'),
  ]);
  assert.equal(readProbeOutput(both), { hasAudio: true, hasVideo: true, width: 1280, height: 720 });
  assert.equal(readProbeOutput(mute), { hasAudio: false, hasVideo: true, width: 480, height: 640 });
  assert.equal(readProbeOutput(silent), { hasAudio: true, hasVideo: false, width: 0, height: 0 });
});

test('the first video stream decides the size, as ffmpeg maps it', () => {
  const json = JSON.stringify({ streams: [
    { codec_type: 'data' },
    { codec_type: 'video', width: 2560, height: 1440 },
    { codec_type: 'video', width: 640, height: 360 },
  ] });
  assert.equal(readProbeOutput(json), { hasAudio: false, hasVideo: true, width: 2560, height: 1440 });
});

test('broken or hostile descriptions end in our words', () => {
  const cases: [string, string][] = [
    ['', 'stream description not understood'],
    ['{"streams": [', 'stream description not understood'],
    ['null', 'stream description not understood'],
    ['{}', 'stream description not understood'],
    ['{"streams": {}}', 'stream description not understood'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: -1, height: 360 }] }), 'stream description not understood'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: 1e9, height: 360 }] }), 'stream description not understood'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: 640.5, height: 360 }] }), 'stream description not understood'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: '640', height: 360 }] }), 'stream description not understood'],
    [JSON.stringify({ streams: Array.from({ length: 1000 }, () => ({ codec_type: 'audio' })) }), 'stream description not understood'],
    [JSON.stringify({ streams: [] }), 'stream has no audio or video'],
    [JSON.stringify({ streams: [{ codec_type: 'data' }, { codec_type: 'subtitle' }] }), 'stream has no audio or video'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: 0, height: 0 }, { codec_type: 'audio' }] }), 'picture size unknown'],
    [JSON.stringify({ streams: [{ codec_type: 'video' }] }), 'picture size unknown'],
    [JSON.stringify({ streams: [{ codec_type: 'video', width: 640 }] }), 'picture size unknown'],
  ];
  for (const [json, failure] of cases) assert.equal(readProbeOutput(json), { failure }, json.slice(0, 80));
});

test('the largest side ffmpeg allows is reported as it is, for the 1080p rule to refuse', () => {
  const json = JSON.stringify({ streams: [{ codec_type: 'video', width: 65535, height: 65535 }] });
  assert.equal(readProbeOutput(json), { hasAudio: false, hasVideo: true, width: 65535, height: 65535 });
});

test.run();
