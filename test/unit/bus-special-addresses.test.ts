import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { isPrivateAddress } from '../../bus/special-addresses.ts';

test('private, loopback, link-local and special-purpose IPv4 addresses', () => {
  for (const address of ['127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1',
    '169.254.169.254', '0.0.0.0', '100.64.0.1', '100.127.1.1', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '198.19.255.255', '192.0.0.8', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1', '240.0.0.1']) {
    assert.ok(isPrivateAddress(address), `${address} is special`);
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '172.15.0.1', '172.32.0.1', '192.169.0.1', '100.63.0.1', '100.128.0.1',
    '169.253.1.1', '11.0.0.1', '198.17.255.255', '198.20.0.1', '223.255.255.255']) {
    assert.not.ok(isPrivateAddress(address), `${address} is public`);
  }
});

test('special-purpose IPv6 addresses, including those that embed or translate to IPv4', () => {
  for (const address of ['::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'FE80::abcd', 'febf::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.1.2.3', '::FFFF:192.168.1.1', '::127.0.0.1', '::a00:1',
    '64:ff9b::7f00:1', '64:ff9b:1::1', '2002:7f00:1::1', 'fec0::1', 'feff::1', '2001:db8::1', '2001::1', '100::1', '3fff::1']) {
    assert.ok(isPrivateAddress(address), `${address} is special`);
  }
  for (const address of ['2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', '2a00:1450::1', '64:ff9c::1']) {
    assert.not.ok(isPrivateAddress(address), `${address} is public`);
  }
});

test('what is not an address at all counts as special', () => {
  for (const value of ['', 'localhost', 'example.com', '1.2.3', '::g']) assert.ok(isPrivateAddress(value), value);
});

test.run();
