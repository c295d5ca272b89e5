import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { buildIngestArgs, buildProbeArgs } from '../../actors/ingest/ffmpeg-args.ts';

const base = { session: 's', fps: 4, timeoutSeconds: 5, outputs: { audio: 'unix:/run/a.sock' } };
const inputOptions = (args: string[]) => args.slice(0, args.indexOf('-i'));

test('rtmps verifies the server certificate against the given CA file', () => {
  const args = inputOptions(buildIngestArgs({ ...base, uri: 'rtmps://h/live/x', tls: { verify: true, caFile: '/ca.pem' } }));
  assert.equal(args.slice(args.indexOf('-tls_verify'), args.indexOf('-tls_verify') + 4), ['-tls_verify', '1', '-ca_file', '/ca.pem']);
});

test('rtmps verifies against the system CAs when no file is given, and can be told not to verify', () => {
  const system = inputOptions(buildIngestArgs({ ...base, uri: 'rtmps://h/live/x', tls: { verify: true } }));
  assert.ok(system.includes('-ca_file') && system.includes('/etc/ssl/certs/ca-certificates.crt'));
  const off = inputOptions(buildIngestArgs({ ...base, uri: 'rtmps://h/live/x', tls: { verify: false } }));
  assert.equal(off.slice(off.indexOf('-tls_verify'), off.indexOf('-tls_verify') + 2), ['-tls_verify', '0']);
  assert.not.ok(off.includes('-ca_file'));
});

test('ffprobe, which opens the stream first, checks the certificate the same way', () => {
  const args = inputOptions(buildProbeArgs({ session: 's', uri: 'rtmps://h/live/x', timeoutSeconds: 5, tls: { verify: true, caFile: '/ca.pem' } }));
  assert.equal(args.slice(args.indexOf('-tls_verify'), args.indexOf('-tls_verify') + 4), ['-tls_verify', '1', '-ca_file', '/ca.pem']);
  const off = inputOptions(buildProbeArgs({ session: 's', uri: 'rtmps://h/live/x', timeoutSeconds: 5, tls: { verify: false } }));
  assert.equal(off.slice(off.indexOf('-tls_verify'), off.indexOf('-tls_verify') + 2), ['-tls_verify', '0']);
});

test('plain rtmp and rtsp carry no TLS options', () => {
  for (const uri of ['rtmp://h/live/x', 'rtsp://h/cam']) {
    const args = buildIngestArgs({ ...base, uri, tls: { verify: true, caFile: '/ca.pem' } });
    assert.not.ok(args.includes('-tls_verify'), uri);
  }
});

test.run();
