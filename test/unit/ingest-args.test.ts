// The ffprobe and ffmpeg command lines of ingest, and the analysis size arithmetic (checked
// against ffmpeg's own evaluation of the scale expression, read from its PPM frames).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readConfig } from '../../bus/config.ts';
import {
  INPUT_DECODERS,
  INPUT_FORMATS,
  INPUT_PROTOCOLS,
  MAX_PIXELS,
  analysisSize,
  buildIngestArgs,
  buildProbeArgs,
  ffprobePath,
  scaleFilter,
  unixOutput,
} from '../../actors/ingest/ffmpeg-args.ts';
import { FrameAssembler, type Frame } from '../../actors/ingest/frame-assembler.ts';

const config = readConfig();

const run = promisify(execFile);

const AUDIO_OUTPUT = unixOutput('/srv/run/decoders-1/1-audio.sock');
const VIDEO_OUTPUT = unixOutput('/srv/run/decoders-1/1-video.sock');
const outputs = { audio: AUDIO_OUTPUT, video: VIDEO_OUTPUT };

function valueAfter(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at < 0 ? undefined : args[at + 1];
}

function inputArgs(args: string[]): string[] {
  return args.slice(0, args.indexOf('-i'));
}

test('the protocol whitelist allows only what rtmp, rtmps and rtsp need, on the input', () => {
  for (const uri of ['rtmp://h/live/a', 'rtmps://h/live/a', 'rtsp://h/cam']) {
    const args = buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 10 });
    const whitelist = valueAfter(inputArgs(args), '-protocol_whitelist')?.split(',') ?? [];
    assert.equal(whitelist.sort(), ['rtmp', 'rtmps', 'rtp', 'rtsp', 'tcp', 'tls', 'udp']);
    for (const forbidden of ['file', 'http', 'https', 'concat', 'pipe', 'data', 'subfile', 'crypto']) {
      assert.not.ok(whitelist.includes(forbidden), forbidden);
    }
    assert.is(args.filter((a) => a === '-protocol_whitelist').length, 1);
    assert.is(args[args.indexOf('-i') + 1], `emo-stream:s:${uri.slice(0, uri.indexOf('/', uri.indexOf('//') + 2))}`);
    assert.ok(inputArgs(args).includes('-nostdin'));
  }
  assert.equal([...INPUT_PROTOCOLS].sort(), ['rtmp', 'rtmps', 'rtp', 'rtsp', 'tcp', 'tls', 'udp']);
});

test('ffmpeg enforces the whitelist on the input', async () => {
  const args = buildIngestArgs({ session: 's', outputs, uri: 'rtmp://127.0.0.1:1/live/a', fps: 4, timeoutSeconds: 1 });
  await Promise.all(['/dev/zero', 'file:/dev/zero', 'http://127.0.0.1:1/a.flv', 'concat:/dev/zero'].map(async (forbidden) => {
    const swapped = args.map((a, i) => (i === args.indexOf('-i') + 1 ? forbidden : a));
    const result = await run(config.ffmpegPath, swapped).then(() => 'ran', (error: { stderr: string }) => error.stderr);
    assert.match(result, /not on whitelist 'rtmp,rtmps,rtsp,tcp,tls,udp,rtp'/, forbidden);
  }));
});

test('the format and decoder whitelists: FLV and RTSP, the codecs of live encoders and IP cameras', () => {
  for (const uri of ['rtmp://h/live/a', 'rtsp://h/cam']) {
    const args = inputArgs(buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 10 }));
    assert.equal(valueAfter(args, '-format_whitelist')?.split(','), [...INPUT_FORMATS]);
    assert.equal(valueAfter(args, '-codec_whitelist')?.split(','), [...INPUT_DECODERS]);
  }
  assert.equal([...INPUT_FORMATS].sort(), ['flv', 'live_flv', 'rtsp']);
  assert.equal([...INPUT_DECODERS].sort(), ['aac', 'h264', 'hevc', 'mp3', 'opus', 'pcm_alaw', 'pcm_mulaw']);
});

test('ffmpeg and ffprobe open only whitelisted formats and decoders', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-whitelist-'));
  const uri = 'rtmp://127.0.0.1/live/a';
  const clip = (name: string, args: string[]) => {
    const file = join(dir, name);
    execFileSync(config.ffmpegPath, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10:duration=1', ...args, '-y', file]);
    return file;
  };
  // The stream's input options with the file protocol allowed: ffmpeg decodes into nothing.
  const opening = (args: string[], file: string) =>
    [...inputArgs(args).map((a) => (a === INPUT_PROTOCOLS.join(',') ? 'file' : a)), '-i', file];
  const outcome = (program: string, args: string[]) =>
    run(program, args).then(() => 'ran', (error: { stderr: string }) => error.stderr);
  try {
    const h264 = clip('h264.flv', ['-c:v', 'libx264', '-f', 'flv']);
    const sorenson = clip('sorenson.flv', ['-c:v', 'flv1', '-f', 'flv']);
    const mpegts = clip('h264.ts', ['-c:v', 'libx264', '-f', 'mpegts']);
    const ffmpeg = (file: string) => outcome(config.ffmpegPath, [...opening(buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 5 }), file), '-f', 'null', '-']);
    const ffprobe = (file: string) => outcome(ffprobePath(config.ffmpegPath), opening(buildProbeArgs({ session: 's', uri, timeoutSeconds: 5 }), file));
    for (const open of [ffmpeg, ffprobe]) {
      assert.is(await open(h264), 'ran');
      assert.match(await open(sorenson), /Codec \(flv\) not on whitelist/);
      assert.match(await open(mpegts), /Format not on whitelist/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('timeouts: -rw_timeout for rtmp(s), -timeout with tcp transport for rtsp, in microseconds', () => {
  for (const uri of ['rtmp://h/live/a', 'rtmps://h/live/a']) {
    const args = inputArgs(buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 7.5 }));
    assert.is(valueAfter(args, '-rw_timeout'), '7500000');
    // For rtmp, -timeout would make ffmpeg listen for a publisher instead of connecting.
    assert.not.ok(args.includes('-timeout'));
    assert.not.ok(args.includes('-rtsp_transport'));
  }
  const rtsp = inputArgs(buildIngestArgs({ session: 's', outputs, uri: 'rtsp://h/cam', fps: 4, timeoutSeconds: 7.5 }));
  assert.is(valueAfter(rtsp, '-timeout'), '7500000');
  assert.is(valueAfter(rtsp, '-rtsp_transport'), 'tcp');
  assert.not.ok(rtsp.includes('-rw_timeout'));
});

test('ffprobe opens the stream with the same whitelists, bounds, timeouts and TLS checks as ffmpeg', () => {
  const opening = (args: string[]) =>
    ['-protocol_whitelist', '-format_whitelist', '-codec_whitelist', '-max_pixels', '-probesize', '-analyzeduration', '-fpsprobesize', '-rw_timeout', '-timeout', '-rtsp_transport', '-tls_verify', '-ca_file'].map((flag) => valueAfter(args, flag));
  const tls = { verify: true, caFile: '/ca.pem' };
  for (const uri of ['rtmp://h/live/a', 'rtmps://h/live/a', 'rtsp://h/cam']) {
    const probe = buildProbeArgs({ session: 's', uri, timeoutSeconds: 7.5, tls });
    const args = buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 7.5, tls });
    assert.equal(opening(inputArgs(probe)), opening(inputArgs(args)), uri);
    assert.is(probe[probe.indexOf('-i') + 1], args[args.indexOf('-i') + 1] ?? '');
    assert.is(valueAfter(probe, '-max_pixels'), String(MAX_PIXELS));
    // JSON on stdout, errors only on stderr, and no tags: they are the server's text.
    assert.is(valueAfter(probe, '-of'), 'json');
    assert.is(valueAfter(probe, '-loglevel'), 'error');
    assert.is(valueAfter(probe, '-show_entries'), 'stream=codec_type,width,height');
  }
  assert.throws(() => buildProbeArgs({ session: 's', uri: 'file:///etc/passwd', timeoutSeconds: 5 }), /streamUri: protocol must be one of/);
});

test('neither command line holds the URI: a placeholder names the session and the scheme, host and port', () => {
  const uri = 'rtmp://user:pass-XYZ@h.example:1935/live/key-XYZ?token=token-XYZ';
  for (const args of [buildIngestArgs({ session: 's1', outputs, uri, fps: 4, timeoutSeconds: 5 }), buildProbeArgs({ session: 's1', uri, timeoutSeconds: 5 })]) {
    assert.is(args[args.indexOf('-i') + 1], 'emo-stream:s1:rtmp://h.example:1935');
    assert.not.ok(args.some((arg) => arg.includes('XYZ')), args.join(' '));
  }
  // An error may be logged: it names the scheme, never the URI.
  assert.throws(() => buildProbeArgs({ session: 's1', uri: 'http://h/live/key-XYZ', timeoutSeconds: 5 }), (error: Error) => /got http\b/.test(error.message) && !error.message.includes('XYZ'));
});

test('ffprobe is found beside ffmpeg', () => {
  assert.is(ffprobePath('ffmpeg'), 'ffprobe');
  assert.is(ffprobePath('/usr/bin/ffmpeg'), '/usr/bin/ffprobe');
  assert.is(ffprobePath('/opt/ffmpeg/bin/ffmpeg-5.1'), '/opt/ffmpeg/bin/ffprobe-5.1');
  assert.throws(() => ffprobePath('/usr/local/bin/avconv'), /ffprobe/);
});

test('outputs: 16 kHz mono s16le and PPM frames at the analysis rate to the given sockets, fps before scale', () => {
  const args = buildIngestArgs({ session: 's', outputs, uri: 'rtmp://h/live/a', fps: 4, timeoutSeconds: 10 });
  assert.is(AUDIO_OUTPUT, 'unix:/srv/run/decoders-1/1-audio.sock');
  const audio = args.slice(args.indexOf('-i') + 2, args.indexOf(AUDIO_OUTPUT) + 1);
  // Not optional: ffprobe found the stream, and one that is gone by now fails the run.
  assert.equal(audio.slice(0, 2), ['-map', '0:a:0']);
  assert.is(valueAfter(audio, '-ar'), '16000');
  assert.is(valueAfter(audio, '-ac'), '1');
  assert.is(valueAfter(audio, '-f'), 's16le');
  const video = args.slice(args.indexOf(AUDIO_OUTPUT) + 1);
  assert.equal(video.slice(0, 2), ['-map', '0:v:0']);
  assert.is(valueAfter(video, '-vf'), `fps=4,${scaleFilter()}`);
  assert.is(valueAfter(video, '-pix_fmt'), 'rgb24');
  assert.is(valueAfter(video, '-c:v'), 'ppm');
  assert.is(valueAfter(video, '-f'), 'image2pipe');
  assert.is(video[video.length - 1], VIDEO_OUTPUT);
  // No output is a file: media never touches the disk.
  const written = args.filter((a, i) => i > args.indexOf('-i') + 1 && /^[a-z]+:/.test(a) && !a.startsWith('0:'));
  assert.equal(written, [AUDIO_OUTPUT, VIDEO_OUTPUT]);
  // The decoder refuses pictures over 1080p; the streams are known, so ffmpeg probes briefly.
  assert.is(valueAfter(inputArgs(args), '-max_pixels'), String(1920 * 1080));
  assert.is(MAX_PIXELS, 1920 * 1080);
  assert.is(valueAfter(inputArgs(args), '-analyzeduration'), '3000000');
  // The streams' frame rate is never used: estimating it would hold the probe to its end.
  assert.is(valueAfter(inputArgs(args), '-fpsprobesize'), '0');
  assert.is(valueAfter(args, '-loglevel'), 'error');

  const videoOnly = buildIngestArgs({ session: 's', outputs: { video: VIDEO_OUTPUT }, uri: 'rtsp://h/cam', fps: 2, timeoutSeconds: 10 });
  assert.not.ok(videoOnly.includes('-ar'));
  assert.is(videoOnly[videoOnly.length - 1], VIDEO_OUTPUT);
  const audioOnly = buildIngestArgs({ session: 's', outputs: { audio: AUDIO_OUTPUT }, uri: 'rtsp://h/cam', fps: 2, timeoutSeconds: 10 });
  assert.is(audioOnly[audioOnly.length - 1], AUDIO_OUTPUT);
  assert.not.ok(audioOnly.includes('-vf'));
});

test('video is decoded economically: no non-reference frames, no deblocking; audio untouched', () => {
  const args = buildIngestArgs({ session: 's', outputs, uri: 'rtmp://example.com/live/a', fps: 4, timeoutSeconds: 5 });
  const input = inputArgs(args);
  assert.is(valueAfter(input, '-skip_frame:v'), 'noref');
  assert.is(valueAfter(input, '-skip_loop_filter:v'), 'all');
  assert.ok(!input.includes('-skip_frame') && !input.includes('-skip_loop_filter'), 'only video decoders');
});

test('rejects other schemes and nonsense options', () => {
  for (const uri of ['file:///etc/passwd', 'http://h/a.flv', '/tmp/a.flv', 'concat:a|b', 'pipe:0', 'RTMPT://h/a']) {
    assert.throws(() => buildIngestArgs({ session: 's', outputs, uri, fps: 4, timeoutSeconds: 10 }), /streamUri: (protocol must be one of|must be an absolute URI)/);
  }
  assert.ok(buildIngestArgs({ session: 's', outputs, uri: 'RTSP://h/cam', fps: 4, timeoutSeconds: 10 }).includes('-rtsp_transport'), 'the scheme in any case');
  assert.throws(() => buildIngestArgs({ session: 's', outputs, uri: 'rtmp://h/a', fps: 0, timeoutSeconds: 10 }), /fps/);
  assert.throws(() => buildIngestArgs({ session: 's', outputs, uri: 'rtmp://h/a', fps: 4, timeoutSeconds: 0 }), /timeout/);
  assert.throws(() => buildIngestArgs({ session: 's', outputs: {}, uri: 'rtmp://h/a', fps: 4, timeoutSeconds: 1 }), /at least one/);
});

test('analysis size: longer side at most 640, aspect kept, even sides', () => {
  const cases: [number, number, number, number][] = [
    [1280, 720, 640, 360],
    [720, 1280, 360, 640],
    [2560, 1440, 640, 360],
    [1920, 1080, 640, 360],
    [640, 480, 640, 480],
    [480, 640, 480, 640],
    [320, 240, 320, 240],
    [1365, 767, 640, 360],
    [1919, 1079, 640, 360],
    [641, 3, 640, 2],
    [639, 479, 640, 480],
    [100, 2000, 32, 640],
  ];
  for (const [width, height, outWidth, outHeight] of cases) {
    assert.equal(analysisSize({ width, height }), { width: outWidth, height: outHeight }, `${width}x${height}`);
  }
});

test('ffmpeg evaluates scaleFilter() to exactly analysisSize(), as the PPM frames say', async () => {
  const sizes: [number, number][] = [[1280, 720], [720, 1280], [1365, 767], [767, 1365], [1919, 1079], [641, 3], [639, 479], [333, 333]];
  await Promise.all(sizes.map(async ([width, height]) => {
    const { stdout } = await run(config.ffmpegPath, [
      '-hide_banner', '-nostdin', '-nostats', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=1`,
      '-frames:v', '2', '-vf', `fps=4,${scaleFilter()}`, '-pix_fmt', 'rgb24', '-c:v', 'ppm', '-f', 'image2pipe', 'pipe:1',
    ], { maxBuffer: 8 << 20, encoding: 'buffer' });
    const frames: Frame[] = [];
    const expected = analysisSize({ width, height });
    assert.is(new FrameAssembler(expected, (frame) => frames.push(frame)).push(stdout), undefined, `${width}x${height}`);
    assert.is(frames.length, 2, `${width}x${height}`);
  }));
});

test.run();
