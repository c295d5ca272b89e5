// Which client a request comes from: X-Forwarded-For counts only when the peer, and each hop
// read before the client, is a proxy named in TRUSTED_PROXIES; and what it is counted as by
// every bound by address: an IPv4 address, or an IPv6 /64.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { IncomingMessage } from 'node:http';
import { ClientAddresses, clientKey } from '../../gateway/client-address.ts';

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
  assert.is(addresses.of(from('fd00::1', '2001:db8::7')), '2001:db8:0:0::/64');
  assert.is(addresses.of(from('2001:db8::1', '2001:db8::7')), '2001:db8:0:0::/64');
  // The peer's own /64, not the one it names: an untrusted peer's header is still ignored.
  assert.is(addresses.of(from('2001:db8:5::1', '2001:db8:6::7')), '2001:db8:5:0::/64');
});

test('IPv4 is keyed by its address', () => {
  assert.is(clientKey('203.0.113.9'), '203.0.113.9');
  assert.is.not(clientKey('203.0.113.9'), clientKey('203.0.113.10'));
});

test('IPv6 is keyed by its /64, however the address is written', () => {
  const key = '2001:db8:1:2::/64';
  for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:0:0:0:9', '2001:0db8:0001:0002::abcd']) {
    assert.is(clientKey(address), key, address);
  }
  assert.is(clientKey('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  assert.is(clientKey('::1'), '0:0:0:0::/64');
  assert.is(clientKey('2001:db8::1.2.3.4'), '2001:db8:0:0::/64');
});

test('an IPv4-mapped IPv6 address is its IPv4 address, in either spelling', () => {
  assert.is(clientKey('::ffff:203.0.113.9'), '203.0.113.9');
  assert.is(clientKey('::FFFF:cb00:7109'), '203.0.113.9');
  assert.is(clientKey('0:0:0:0:0:ffff:203.0.113.9'), '203.0.113.9');
  const addresses = new ClientAddresses([]);
  assert.is(addresses.of(from('::ffff:cb00:7109')), '203.0.113.9');
});

test('a zone id does not make another client', () => {
  assert.is(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.is(clientKey('fe80::2%1'), 'fe80:0:0:0::/64');
});

test('a peer that reports no address is counted as what it reported', () => {
  assert.is(clientKey('unknown'), 'unknown');
  assert.is(new ClientAddresses([]).of({ socket: {}, headers: {} } as unknown as IncomingMessage), 'unknown');
});

test('an entry that is not an address or block stops the gateway at start', () => {
  for (const entry of ['proxy.example', '10.0.0.0/33', '10.0.0.1/x', 'fd00::/129', '']) {
    assert.throws(() => new ClientAddresses([entry]), /TRUSTED_PROXIES/, entry);
  }
});

test.run();
