// Which client a request comes from: X-Forwarded-For counts only when the peer, and each hop
// read before the client, is a proxy named in TRUSTED_PROXIES.
import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import type { IncomingMessage } from 'node:http';
import { ClientAddresses } from '../../gateway/client-address.ts';

const from = (peer: string, forwardedFor?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

test('with no trusted proxy the peer is the client, whatever the header says', () => {
  const addresses = new ClientAddresses([]);
  assert.is(addresses.of(from('10.0.0.5', '203.0.113.9')), '10.0.0.5');
  assert.is(addresses.of(from('::ffff:10.0.0.5')), '10.0.0.5');
});

test('a trusted proxy: the address it appended; a client cannot prepend one of its own choosing', () => {
  const addresses = new ClientAddresses(['10.0.0.1', '192.168.0.0/16']);
  assert.is(addresses.of(from('10.0.0.1', '203.0.113.9')), '203.0.113.9');
  assert.is(addresses.of(from('::ffff:10.0.0.1', '203.0.113.9')), '203.0.113.9');
  // The client wrote 1.2.3.4 itself; the proxy appended the address it saw.
  assert.is(addresses.of(from('10.0.0.1', '1.2.3.4, 203.0.113.9')), '203.0.113.9');
  // Two trusted proxies in a row, and the header split over two lines.
  assert.is(addresses.of(from('10.0.0.1', ['1.2.3.4, 203.0.113.9', '192.168.3.4'])), '203.0.113.9');
  // A trusted proxy that sent no header, or nonsense: the proxy itself is all that is known.
  assert.is(addresses.of(from('10.0.0.1')), '10.0.0.1');
  assert.is(addresses.of(from('10.0.0.1', 'unknown')), '10.0.0.1');
  assert.is(addresses.of(from('10.0.0.1', '203.0.113.9, garbage')), '10.0.0.1');
  // Every hop trusted: the leftmost.
  assert.is(addresses.of(from('10.0.0.1', '192.168.1.1')), '192.168.1.1');
  // Not a trusted peer: its header is ignored.
  assert.is(addresses.of(from('10.0.0.2', '203.0.113.9')), '10.0.0.2');
});

test('IPv6 proxies and blocks', () => {
  const addresses = new ClientAddresses(['fd00::/8']);
  assert.is(addresses.of(from('fd00::1', '2001:db8::7')), '2001:db8::7');
  assert.is(addresses.of(from('2001:db8::1', '2001:db8::7')), '2001:db8::1');
});

test('an entry that is not an address or block stops the gateway at start', () => {
  for (const entry of ['proxy.example', '10.0.0.0/33', '10.0.0.1/x', 'fd00::/129', '']) {
    assert.throws(() => new ClientAddresses([entry]), /TRUSTED_PROXIES/, entry);
  }
});

test.run();
