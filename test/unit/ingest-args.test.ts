// The ffmpeg command line for ingest, the analysis size arithmetic (checked against ffmpeg's own
// evaluation of the scale expression), and reading stream info from real ffmpeg stderr.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readConfig } from '../../bus/config.ts';
import {
  INPUT_PROTOCOLS,
  analysisSize,
  buildIngestArgs,
  scaleFilter,
  streamScheme,
} from '../../actors/ingest/ffmpeg-args.ts';
import { StderrReader, parseStreamLine } from '../../actors/ingest/stream-info.ts';

const config = readConfig();

const run = promisify(execFile);

function valueAfter(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at < 0 ? undefined : args[at + 1];
}

function inputArgs(args: string[]): string[] {
  return args.slice(0, args.indexOf('-i'));
}

test('the protocol whitelist allows only what rtmp, rtmps and rtsp need, on the input', () => {
  for (const uri of ['rtmp://h/live/a', 'rtmps://h/live/a', 'rtsp://h/cam']) {
    const args = buildIngestArgs({ uri, fps: 4, timeoutSeconds: 10 });
    const whitelist = valueAfter(inputArgs(args), '-protocol_whitelist')?.split(',') ?? [];
    assert.equal(whitelist.sort(), ['rtmp', 'rtmps', 'rtp', 'rtsp', 'tcp', 'tls', 'udp']);
    for (const forbidden of ['file', 'http', 'https', 'concat', 'pipe', 'data', 'subfile', 'crypto']) {
      assert.not.ok(whitelist.includes(forbidden), forbidden);
    }
    assert.is(args.filter((a) => a === '-protocol_whitelist').length, 1);
    assert.is(args[args.indexOf('-i') + 1], uri);
    assert.ok(inputArgs(args).includes('-nostdin'));
  }
  assert.equal([...INPUT_PROTOCOLS].sort(), ['rtmp', 'rtmps', 'rtp', 'rtsp', 'tcp', 'tls', 'udp']);
});

test('ffmpeg enforces the whitelist on the input and still writes the pipe outputs', async () => {
  const args = buildIngestArgs({ uri: 'rtmp://127.0.0.1:1/live/a', fps: 4, timeoutSeconds: 1 });
  await Promise.all(['/dev/zero', 'file:/dev/zero', 'http://127.0.0.1:1/a.flv', 'concat:/dev/zero'].map(async (forbidden) => {
    const swapped = args.map((a, i) => (i === args.indexOf('-i') + 1 ? forbidden : a));
    const result = await run(config.ffmpegPath, swapped).then(() => 'ran', (error: { stderr: string }) => error.stderr);
    assert.match(result, /not on whitelist 'rtmp,rtmps,rtsp,tcp,tls,udp,rtp'/, forbidden);
  }));
});

test('timeouts: -rw_timeout for rtmp(s), -timeout with tcp transport for rtsp, in microseconds', () => {
  for (const uri of ['rtmp://h/live/a', 'rtmps://h/live/a']) {
    const args = inputArgs(buildIngestArgs({ uri, fps: 4, timeoutSeconds: 7.5 }));
    assert.is(valueAfter(args, '-rw_timeout'), '7500000');
    // For rtmp, -timeout would make ffmpeg listen for a publisher instead of connecting.
    assert.not.ok(args.includes('-timeout'));
    assert.not.ok(args.includes('-rtsp_transport'));
  }
  const rtsp = inputArgs(buildIngestArgs({ uri: 'rtsp://h/cam', fps: 4, timeoutSeconds: 7.5 }));
  assert.is(valueAfter(rtsp, '-timeout'), '7500000');
  assert.is(valueAfter(rtsp, '-rtsp_transport'), 'tcp');
  assert.not.ok(rtsp.includes('-rw_timeout'));
});

test('outputs: 16 kHz mono s16le on fd 3, rgb24 at the analysis rate on fd 4, fps before scale', () => {
  const args = buildIngestArgs({ uri: 'rtmp://h/live/a', fps: 4, timeoutSeconds: 10 });
  const audio = args.slice(args.indexOf('-i') + 2, args.indexOf('pipe:3') + 1);
  assert.equal(audio.slice(0, 2), ['-map', '0:a:0?']);
  assert.is(valueAfter(audio, '-ar'), '16000');
  assert.is(valueAfter(audio, '-ac'), '1');
  assert.is(valueAfter(audio, '-f'), 's16le');
  const video = args.slice(args.indexOf('pipe:3') + 1);
  assert.equal(video.slice(0, 2), ['-map', '0:v:0?']);
  assert.is(valueAfter(video, '-vf'), `fps=4,${scaleFilter()}`);
  assert.is(valueAfter(video, '-pix_fmt'), 'rgb24');
  assert.is(valueAfter(video, '-f'), 'rawvideo');
  assert.is(video[video.length - 1], 'pipe:4');
  // No output is a file: media never touches the disk.
  const outputs = args.filter((a, i) => i > args.indexOf('-i') + 1 && /^[a-z]+:/.test(a) && !a.startsWith('0:'));
  assert.equal(outputs, ['pipe:3', 'pipe:4']);

  const videoOnly = buildIngestArgs({ uri: 'rtsp://h/cam', fps: 2, timeoutSeconds: 10, audio: false });
  assert.not.ok(videoOnly.includes('pipe:3'));
  assert.ok(videoOnly.includes('pipe:4'));
  assert.not.ok(args.includes('-analyzeduration'), 'ffmpeg probes as long as it needs by default');
  assert.is(valueAfter(inputArgs(videoOnly), '-analyzeduration'), undefined);
  const reprobe = buildIngestArgs({ uri: 'rtsp://h/cam', fps: 2, timeoutSeconds: 10, audio: false, probeSeconds: 1 });
  assert.is(valueAfter(inputArgs(reprobe), '-analyzeduration'), '1000000');
  const audioOnly = buildIngestArgs({ uri: 'rtsp://h/cam', fps: 2, timeoutSeconds: 10, video: false });
  assert.ok(audioOnly.includes('pipe:3'));
  assert.not.ok(audioOnly.includes('pipe:4'));
});

test('rejects other schemes and nonsense options', () => {
  for (const uri of ['file:///etc/passwd', 'http://h/a.flv', '/tmp/a.flv', 'concat:a|b', 'pipe:0', 'RTMPT://h/a']) {
    assert.throws(() => buildIngestArgs({ uri, fps: 4, timeoutSeconds: 10 }), /unsupported stream scheme/);
  }
  assert.is(streamScheme('RTSP://h/cam'), 'rtsp');
  assert.throws(() => buildIngestArgs({ uri: 'rtmp://h/a', fps: 0, timeoutSeconds: 10 }), /fps/);
  assert.throws(() => buildIngestArgs({ uri: 'rtmp://h/a', fps: 4, timeoutSeconds: 0 }), /timeout/);
  assert.throws(() => buildIngestArgs({ uri: 'rtmp://h/a', fps: 4, timeoutSeconds: 1, audio: false, video: false }));
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

test('ffmpeg evaluates scaleFilter() to exactly analysisSize()', async () => {
  const sizes = ['1280x720', '720x1280', '1365x767', '767x1365', '1919x1079', '641x3', '639x479', '333x333'];
  await Promise.all(sizes.map(async (size) => {
    const { stderr } = await run(config.ffmpegPath, [
      '-hide_banner', '-nostdin', '-nostats', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=1`,
      '-frames:v', '1', '-vf', `fps=4,${scaleFilter()}`, '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1',
    ], { maxBuffer: 8 << 20, encoding: 'utf8' });
    const reader = new StderrReader();
    for (const line of stderr.split('\n')) reader.read(line);
    const input = reader.input();
    assert.is(`${input.width}x${input.height}`, size);
    assert.equal(reader.videoOutputSize, analysisSize(input), size);
  }));
});

test('stream lines: kind, index and picture size', () => {
  assert.equal(
    parseStreamLine('  Stream #0:1: Video: h264 (Constrained Baseline), yuv420p(progressive), 1280x720 [SAR 1:1 DAR 16:9], 30 fps, 30 tbr, 1k tbn'),
    { file: 0, index: 1, kind: 'video', width: 1280, height: 720 },
  );
  assert.equal(
    parseStreamLine('  Stream #0:0[0x1](und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709, progressive), 720x1280 [SAR 1:1 DAR 9:16], 3173 kb/s, 30 fps, 30 tbr, 15360 tbn (default)'),
    { file: 0, index: 0, kind: 'video', width: 720, height: 1280 },
  );
  assert.equal(
    parseStreamLine('  Stream #1:0: Video: rawvideo (RGB[24] / 0x18424752), rgb24(pc, gbr/unknown/unknown, progressive), 640x360 [SAR 1:1 DAR 16:9], q=2-31, 22118 kb/s, 4 fps, 4 tbn'),
    { file: 1, index: 0, kind: 'video', width: 640, height: 360 },
  );
  assert.equal(
    parseStreamLine('  Stream #0:0: Video: h264, none, 90k tbr, 90k tbn'),
    { file: 0, index: 0, kind: 'video' },
  );
  assert.equal(
    parseStreamLine('  Stream #0:1[0x2](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 70 kb/s (default)'),
    { file: 0, index: 1, kind: 'audio' },
  );
  assert.is(parseStreamLine('  Stream #0:1 -> #1:0 (h264 (native) -> rawvideo (native))'), undefined);
  assert.is(parseStreamLine('    displayWidth    : 1280'), undefined);
});

// Captured from ffmpeg 5.1 pulling from nginx-rtmp with the ingest arguments.
const RTMP_STDERR = `Input #0, flv, from 'rtmp://127.0.0.1:19350/live/a':
  Metadata:
    |RtmpSampleAccess: true
    Server          : NGINX RTMP (github.com/arut/nginx-rtmp-module)
    displayWidth    : 1280
    displayHeight   : 720
    fps             : 30
    profile         : 
    level           : 
  Duration: 00:00:00.00, start: 1.997000, bitrate: N/A
  Stream #0:0: Audio: aac (LC), 44100 Hz, mono, fltp, 63 kb/s
  Stream #0:1: Video: h264 (Constrained Baseline), yuv420p(progressive), 1280x720 [SAR 1:1 DAR 16:9], 30 fps, 30 tbr, 1k tbn
Stream mapping:
  Stream #0:0 -> #0:0 (aac (native) -> pcm_s16le (native))
  Stream #0:1 -> #1:0 (h264 (native) -> rawvideo (native))
Output #0, s16le, to 'pipe:3':
  Metadata:
    |RtmpSampleAccess: true
    Server          : NGINX RTMP (github.com/arut/nginx-rtmp-module)
    encoder         : Lavf59.27.100
  Stream #0:0: Audio: pcm_s16le, 16000 Hz, mono, s16, 256 kb/s
    Metadata:
      encoder         : Lavc59.37.100 pcm_s16le
Output #1, rawvideo, to 'pipe:4':
  Metadata:
    |RtmpSampleAccess: true
    Server          : NGINX RTMP (github.com/arut/nginx-rtmp-module)
    encoder         : Lavf59.27.100
  Stream #1:0: Video: rawvideo (RGB[24] / 0x18424752), rgb24(pc, gbr/unknown/unknown, progressive), 640x360 [SAR 1:1 DAR 16:9], q=2-31, 22118 kb/s, 4 fps, 4 tbn
    Metadata:
      encoder         : Lavc59.37.100 rawvideo
Exiting normally, received signal 15.`;

// Captured from ffmpeg 5.1 pulling a stream without audio: it refuses the audio output.
const NO_AUDIO_STDERR = `Input #0, flv, from 'rtmp://127.0.0.1:19350/live/na':
  Metadata:
    |RtmpSampleAccess: true
    displayWidth    : 640
    displayHeight   : 480
  Duration: 00:00:00.00, start: 3.000000, bitrate: N/A
  Stream #0:0: Video: h264 (Constrained Baseline), yuv420p(progressive), 640x480 [SAR 1:1 DAR 4:3], 25 fps, 25 tbr, 1k tbn
Output #0, s16le, to 'pipe:3':
Output file #0 does not contain any stream`;

// Captured from ffmpeg 5.1 with a port nothing listens on.
const REFUSED_STDERR = `[tcp @ 0x5582c624bd00] Connection to tcp://127.0.0.1:1?tcp_nodelay=0 failed: Connection refused
[rtmp @ 0x5582c624b200] Cannot open connection tcp://127.0.0.1:1?tcp_nodelay=0
rtmp://127.0.0.1:1/live/x: Connection refused`;

function readAll(text: string): { reader: StderrReader; described: number } {
  const reader = new StderrReader();
  let described = 0;
  for (const line of text.split('\n')) if (reader.read(line)) described++;
  return { reader, described };
}

test('stderr: input streams and size before the mapping, output size after', () => {
  const reader = new StderrReader();
  const lines = RTMP_STDERR.split('\n');
  const mapping = lines.indexOf('Stream mapping:');
  for (const line of lines.slice(0, mapping)) assert.not.ok(reader.read(line), line);
  assert.ok(reader.read(lines[mapping] ?? ''), 'the mapping line completes the input description');
  assert.equal(reader.input(), { hasVideo: true, hasAudio: true, width: 1280, height: 720 });
  assert.is(reader.videoOutputSize, undefined);
  for (const line of lines.slice(mapping + 1)) assert.not.ok(reader.read(line));
  assert.equal(reader.videoOutputSize, { width: 640, height: 360 });
  assert.equal(reader.input(), { hasVideo: true, hasAudio: true, width: 1280, height: 720 });
  assert.not.ok(reader.emptyOutput);
});

test('stderr: a stream without audio is recognised from the refusal', () => {
  const { reader, described } = readAll(NO_AUDIO_STDERR);
  assert.is(described, 0);
  assert.ok(reader.inputDescribed);
  assert.ok(reader.emptyOutput);
  assert.equal(reader.input(), { hasVideo: true, hasAudio: false, width: 640, height: 480 });
  assert.is(reader.reason, 'Output file #0 does not contain any stream');
});

test('stderr: the reason is the last lines that explain something, the cause included', () => {
  const reason = readAll(REFUSED_STDERR).reader.reason;
  assert.ok(reason.endsWith('rtmp://127.0.0.1:1/live/x: Connection refused'), reason);
  assert.match(reason, /^tcp: Connection to tcp:\/\/127\.0\.0\.1:1\S* failed: Connection refused; rtmp: Cannot open connection/);
  assert.is(readAll(`${REFUSED_STDERR}\nConversion failed!\n`).reader.reason, reason);
  assert.is(readAll(RTMP_STDERR).reader.reason, '');
});

test.run();
