// Stream URIs: only rtmp, rtmps and rtsp; credentials, path and query never shown.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../bus/errors.ts';
import { parseStreamUri } from '../../bus/stream-uri.ts';

function refused(raw: string): ServiceError {
  try {
    parseStreamUri(raw);
  } catch (error) {
    assert.instance(error, ServiceError);
    const e = error as ServiceError;
    assert.is(e.status, 400);
    assert.equal(e.details?.map((d) => d.field), ['body.streamUri']);
    assert.match(e.message, /^body\.streamUri: /);
    return e;
  }
  throw new assert.Assertion({ message: `${raw} was accepted`, generated: false, operator: 'throws', expects: 'throw', actual: 'none' });
}

test('the three stream schemes are accepted', () => {
  assert.equal(parseStreamUri('rtmp://example.com/live/key'), { protocol: 'rtmp', hostname: 'example.com', port: 1935, display: 'rtmp://example.com' });
  assert.equal(parseStreamUri('rtmps://example.com:443/live/key'), { protocol: 'rtmps', hostname: 'example.com', port: 443, display: 'rtmps://example.com:443' });
  assert.equal(parseStreamUri('rtsp://10.0.0.5:8554/cam?profile=1'), { protocol: 'rtsp', hostname: '10.0.0.5', port: 8554, display: 'rtsp://10.0.0.5:8554' });
  assert.is(parseStreamUri('RTMP://Example.COM/live').protocol, 'rtmp');
  assert.is(parseStreamUri('rtsp://camera/live').port, 554, 'the protocol default');
});

test('every other scheme, and what is not an absolute URI, is refused', () => {
  for (const raw of ['http://example.com/x', 'https://example.com/x.m3u8', 'file:///etc/passwd', 'concat:/a|/b',
    'udp://1.2.3.4:5', 'srt://1.2.3.4', 'data:text/plain,x', '/var/clip.flv', 'clip.flv', 'example.com/live', '']) {
    refused(raw);
  }
  assert.match(refused('http://example.com').message, /rtmp, rtmps, rtsp/);
});

test('a URI without a host, or with white space or NUL, is refused', () => {
  refused('rtmp:///live/x');
  refused('rtmp://');
  refused('rtmp://example.com/live/a b');
  refused('rtmp://example.com/live/\0x');
  refused('rtmp://example.com/live/x\n');
});

test('over 2048 characters is refused; 2048 is accepted', () => {
  const prefix = 'rtmp://example.com/';
  assert.is(parseStreamUri(prefix + 'k'.repeat(2048 - prefix.length)).protocol, 'rtmp');
  assert.match(refused(prefix + 'k'.repeat(2049 - prefix.length)).message, /2048/);
});

test('what is shown keeps scheme, host and port: no credentials, path, query or fragment', () => {
  assert.is(parseStreamUri('rtmp://user:secret@example.com:1935/live/x').display, 'rtmp://example.com:1935');
  assert.is(parseStreamUri('rtsp://admin@10.0.0.5/cam').display, 'rtsp://10.0.0.5');
  assert.is(parseStreamUri('rtsp://:pw@10.0.0.5/cam').display, 'rtsp://10.0.0.5');
  const encoded = parseStreamUri('rtmps://u%40x:p%3Aw%2F@example.com/live');
  assert.is(encoded.display, 'rtmps://example.com');
  assert.is(encoded.hostname, 'example.com');
  assert.is(parseStreamUri('rtmp://ingest.example.com/app/sk_live_0123?token=t0k3n#f').display, 'rtmp://ingest.example.com');
  assert.is(parseStreamUri('RTSP://Cam.Example.COM:8554/Streaming/Channels/101?auth=x').display, 'rtsp://Cam.Example.COM:8554');
});

test('an IPv6 host is given without brackets', () => {
  const uri = parseStreamUri('rtmp://[2001:db8::1]:1935/live');
  assert.is(uri.hostname, '2001:db8::1');
  assert.is(uri.display, 'rtmp://[2001:db8::1]:1935');
});

test.run();
