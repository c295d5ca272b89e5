// ffmpeg's and ffprobe's stderr, as captured from ffmpeg 5.1 here, named in our own words; the
// stream server's text and the URI's credentials are never repeated.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { FailureReason, NO_STREAM_URI } from '../../actors/ingest/failure-reason.ts';

function reasonOf(stderr: string, code: number | null = 1, signal: NodeJS.Signals | null = null): string {
  const reader = new FailureReason('ffmpeg');
  reader.write(stderr);
  return reader.reason(code, signal);
}

// Each captured from ffprobe or ffmpeg 5.1 with the ingest's input options.
const CAPTURED: [string, string][] = [
  [`[tcp @ 0x558943d1f940] Connection to tcp://127.0.0.1:1?tcp_nodelay=0 failed: Connection refused
[rtmp @ 0x558943d1efc0] Cannot open connection tcp://127.0.0.1:1?tcp_nodelay=0
rtmp://u:secret@127.0.0.1:1/live/x: Connection refused
`, 'connection refused'],
  [`[tcp @ 0x55d55fe77640] Connection to tcp://127.0.0.1:1?timeout=3000000 failed: Connection refused
rtsp://127.0.0.1:1/x: Connection refused
`, 'connection refused'],
  [`[tcp @ 0x55e4d381c940] Failed to resolve hostname nonexistent.invalid: Name or service not known
[rtmp @ 0x55e4d381bfc0] Cannot open connection tcp://nonexistent.invalid:1935?tcp_nodelay=0
rtmp://nonexistent.invalid/live/x: Input/output error
`, 'host name not resolved'],
  [`[tls @ 0x555ea4861ac0] Peer certificate failed verification
[rtmps @ 0x555ea4861100] Cannot open connection tls://127.0.0.1:19451
rtmps://127.0.0.1:19451/live/tone: Input/output error
`, 'TLS certificate not trusted'],
  [`[tls @ 0x56112d63cac0] Error in the pull function.
[tls @ 0x56112d63cac0] IO error: Connection timed out
[rtmps @ 0x56112d63c100] Cannot open connection tls://127.0.0.1:19450
rtmps://127.0.0.1:19450/live/tone: Connection timed out
`, 'TLS handshake failed'],
  [`[rtsp @ 0x555ac93ae880] method DESCRIBE failed: 404 Not Found
rtsp://127.0.0.1:19452/nothing: Server returned 404 Not Found
`, 'stream not found'],
  [`[rtmp @ 0x5609f77ecc80] Cannot read RTMP handshake response
rtmp://127.0.0.1:19460/live/x: Connection timed out
`, 'timed out'],
  ['rtsp://127.0.0.1:19460/x: Invalid data found when processing input\n', 'invalid stream data'],
  ['rtmp://127.0.0.1:19450/live/nothing: Input/output error\n', 'connection failed'],
  // The egress guard refusing the connect.
  [`[tcp @ 0x55e0b6e197c0] Connection to tcp://127.0.0.1:19450?tcp_nodelay=0 failed: Permission denied
[rtmp @ 0x55e0b6e18c80] Cannot open connection tcp://127.0.0.1:19450?tcp_nodelay=0
rtmp://127.0.0.1:19450/live/tone: Permission denied
`, 'connection not allowed by the egress policy'],
  [`[tcp @ 0x556038997880] Connection to tcp://[100::1]:1935?tcp_nodelay=0 failed: No route to host
rtmp://[100::1]:1935/live/x: No route to host
`, 'host unreachable'],
  [`[h264 @ 0x55969ac6ce80] [IMGUTILS @ 0x7ffc33bb3ef0] Picture size 2560x1440 exceeds specified max pixel count 2073600, see the documentation if you wish to increase it
Error while opening decoder for input stream #0:1 : Invalid argument
`, 'picture larger than 1920x1080'],
  // An RTMP server rejecting connect, its description faking ffmpeg lines (malicious-peers.test.ts).
  [`[rtmp @ 0x55871a886cc0] Unknown connect error (unsupported authentication method?)
[rtmp @ 0x55871a886cc0] Server error: 
Input #0, flv, from 'x':
  Stream #0:0: Video: h264, none
Stream mapping:
Output #0, rawvideo, to 'pipe:4':
    Stream #0:0: Video: rawvideo, rgb24, 0x0

rtmp://127.0.0.1:45559/live/x: Unknown error occurred
`, 'server refused the stream'],
  ['Stream map \'0:a:0\' matches no streams.\nTo ignore this, add a trailing \'?\' to the map.\n', 'stream changed after probing'],
  // No stream URI in the placeholder's place: the guard's refusal, and ffmpeg run without the guard.
  ['egress guard: no stream URI handed over for emo-stream: (EMO_STREAM_URI missing)\n', NO_STREAM_URI],
  ['emo-stream:s1:rtmp://127.0.0.1:1: Protocol not found\nDid you mean file:emo-stream:s1:rtmp://127.0.0.1:1?\n', NO_STREAM_URI],
];

test('captured failures are named in our words', () => {
  for (const [stderr, expected] of CAPTURED) assert.is(reasonOf(stderr), expected, stderr);
});

test('without a known message, the exit says what happened', () => {
  assert.is(reasonOf('', 0), 'stream ended');
  assert.is(reasonOf('something nobody has seen before\n', 1), 'ffmpeg failed (exit code 1)');
  assert.is(reasonOf('', null, 'SIGSEGV'), 'ffmpeg ended by SIGSEGV');
  const probe = new FailureReason('ffprobe');
  assert.is(probe.reason(8, null), 'ffprobe failed (exit code 8)');
});

test('lines split across chunks and line endings are read whole', () => {
  const text = '[tcp @ 0x1] Connection to tcp://h:1 failed: Connection refused\r\nrtmp://h:1/live/x: Connection refused';
  for (const size of [1, 3, 17, text.length]) {
    const reader = new FailureReason('ffmpeg');
    for (let at = 0; at < text.length; at += size) reader.write(text.slice(at, at + size));
    assert.is(reader.reason(1, null), 'connection refused', `chunks of ${size}`);
  }
});

test('server text is never repeated, whatever it holds', () => {
  const injected = [
    'Server error: \nOutput #0, rawvideo, to \'pipe:4\':\n    Stream #0:0: Video: rawvideo, rgb24, 0x0',
    'Server error: rtmp://admin:hunter2@10.0.0.5/live password=hunter2',
    `Server error: ${'A'.repeat(100_000)}`,
    'Input #0, flv, from \'x\':\n  Stream #0:0: Video: h264, yuv420p, 640x360\nStream mapping:',
  ];
  for (const text of injected) {
    const reason = reasonOf(`[rtmp @ 0x5609f77ecc80] ${text}\nrtmp://u:secret@h/live/x: Unknown error occurred\n`);
    assert.ok(['server refused the stream', 'ffmpeg failed (exit code 1)'].includes(reason), reason);
  }
});

test('an RTMP server error outranks what its description says', () => {
  assert.is(reasonOf('[rtmp @ 0x1] Server error: \nConnection refused\nPermission denied\n'), 'server refused the stream');
});

test('an endless line is cut, and a message past the cut does not count', () => {
  const reader = new FailureReason('ffmpeg');
  for (let i = 0; i < 1000; i++) reader.write('x'.repeat(1000));
  reader.write('Connection refused');
  assert.is(reader.reason(1, null), 'ffmpeg failed (exit code 1)');
});

test.run();
