import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:net';
import { parseAllowance } from '../../actors/egress/allowance.ts';
import { EgressPolicy, type Resolve } from '../../actors/egress/policy.ts';
import { SPECIAL_PURPOSE_RANGES } from '../../bus/special-addresses.ts';

const names: Record<string, string[]> = {
  'public.example': ['8.8.8.8'],
  'inside.example': ['10.1.2.3'],
  'both.example': ['8.8.8.8', '127.0.0.1'],
  'camera.lan': ['192.168.1.20', 'fd00::20'],
};
const resolve: Resolve = async (host) => {
  const addresses = names[host];
  if (!addresses) throw new Error(`ENOTFOUND ${host}`);
  return addresses;
};
const policy = (setting: string) => new EgressPolicy(parseAllowance(setting), '/lib/guard.so', resolve);

test('the setting: off, on, or a list of host:port, ip:port, cidr and cidr:port entries', () => {
  for (const off of ['', 'false', 'FALSE', '0', 'no', 'off']) assert.equal(parseAllowance(off), { kind: 'none' });
  for (const on of ['true', 'TRUE', '1', 'yes', 'on']) assert.equal(parseAllowance(on), { kind: 'all' });
  assert.equal(parseAllowance('camera.lan:554, 127.0.0.1:1935,10.0.0.0/8,192.168.0.0/16:8554,[::1]:554,fd00::/8,[fd00::]/16:554,::1'), {
    kind: 'list',
    entries: [
      { host: 'camera.lan', port: 554 },
      { host: '127.0.0.1', prefix: 32, port: 1935 },
      { host: '10.0.0.0', prefix: 8, port: undefined },
      { host: '192.168.0.0', prefix: 16, port: 8554 },
      { host: '::1', prefix: 128, port: 554 },
      { host: 'fd00::', prefix: 8, port: undefined },
      { host: 'fd00::', prefix: 16, port: 554 },
      { host: '::1', prefix: 128, port: undefined },
    ],
  });
});

test('a malformed entry stops the process at start, naming it', () => {
  for (const bad of ['host:0', 'host:65536', 'host:x', '10.0.0.0/33', 'fd00::/129', 'not a host', 'a,,b', '10.0.0.0/8/1', '[::1]:', 'host:']) {
    assert.throws(() => parseAllowance(bad), /ALLOW_PRIVATE_STREAM_HOSTS/, bad);
  }
});

test('creation: public hosts pass; special-purpose ones only as allowed, every address of a name counting', async () => {
  const off = policy('false');
  assert.is(await off.refusal('public.example', 1935), undefined);
  assert.is(await off.refusal('8.8.8.8', 1935), undefined);
  for (const host of ['inside.example', 'both.example', '127.0.0.1', '::1', '::ffff:127.0.0.1', '198.18.0.1']) {
    assert.match((await off.refusal(host, 1935)) ?? '', /loopback or private/, host);
  }
  assert.match((await off.refusal('missing.example', 1935)) ?? '', /cannot be resolved/);

  assert.is(await policy('true').refusal('both.example', 1935), undefined);

  const list = policy('camera.lan:554,127.0.0.1:1935,10.0.0.0/8');
  assert.is(await list.refusal('camera.lan', 554), undefined);
  assert.ok(await list.refusal('camera.lan', 8554), 'another port of an allowed name');
  assert.is(await list.refusal('192.168.1.20', 554), undefined, 'the name allows its addresses');
  assert.is(await list.refusal('127.0.0.1', 1935), undefined);
  assert.ok(await list.refusal('127.0.0.1', 8123), 'another port of an allowed address');
  assert.ok(await list.refusal('127.0.0.2', 1935), 'another address');
  assert.is(await list.refusal('inside.example', 9999), undefined, 'a network without a port allows every port');
  assert.ok(await list.refusal('both.example', 1935) === undefined, 'public and allowed loopback together');
});

test('the guard environment: the library, the special-purpose ranges, and the allowed entries resolved now', async () => {
  assert.equal(await policy('false').guardEnvironment(), {
    LD_PRELOAD: '/lib/guard.so',
    EMO_EGRESS_REFUSE: SPECIAL_PURPOSE_RANGES.join(','),
    EMO_EGRESS_ALLOW: '',
  });
  assert.is((await policy('true').guardEnvironment()).EMO_EGRESS_REFUSE, '');
  const list = await policy('camera.lan:554,127.0.0.1:1935,10.0.0.0/8,missing.example:1').guardEnvironment();
  assert.is(list.EMO_EGRESS_ALLOW, '192.168.1.20/32/554,fd00::20/128/554,127.0.0.1/32/1935,10.0.0.0/8/0');
  assert.is(list.EMO_EGRESS_REFUSE, SPECIAL_PURPOSE_RANGES.join(','));
});

/** A loopback listener that counts its connections, and a loopback port nothing listens on. */
async function ports(): Promise<{ server: Server; open: number; closed: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  const listen = (on: Server) => new Promise<number>((resolve) => on.listen(0, '127.0.0.1', () => resolve((on.address() as { port: number }).port)));
  const open = await listen(server);
  const spare = createServer();
  const closed = await listen(spare);
  await new Promise((resolve) => spare.close(resolve));
  return { server, open, closed, connections: () => connections };
}

test('nothing listens: only when every vetted address refuses the connection, each connected to as vetted', async () => {
  const { server, open, closed, connections } = await ports();
  let lookups = 0;
  // A name that points to loopback when vetted and elsewhere after: only the vetted answer is used.
  const rebinding: Resolve = async () => (lookups++ === 0 ? ['127.0.0.1'] : ['8.8.8.8']);
  const all = (resolver: Resolve) => new EgressPolicy({ kind: 'all' }, '/lib/guard.so', resolver);
  try {
    assert.ok(await all(rebinding).nothingListens('rebinding.example', closed, 1000));
    assert.is(lookups, 1, 'the name is resolved once');
    assert.not.ok(await all(resolve).nothingListens('127.0.0.1', open, 1000), 'a listener answers');
    assert.is(connections(), 1);
    // One address refuses, another listens: something listens.
    const two: Resolve = async () => ['127.0.0.1', '::1'];
    const v6 = createServer((socket) => socket.destroy());
    const v6Port = await new Promise<number>((resolve, reject) => {
      v6.once('error', reject);
      v6.listen(0, '::1', () => resolve((v6.address() as { port: number }).port));
    }).catch(() => undefined);
    if (v6Port !== undefined) {
      assert.not.ok(await all(two).nothingListens('two.example', v6Port, 1000));
      await new Promise((resolve) => v6.close(resolve));
    }
    // A name with more addresses than the check tries: left to the decoder, even where all refuse.
    const many: Resolve = async () => Array.from({ length: 5 }, () => '127.0.0.1');
    assert.not.ok(await all(many).nothingListens('many.example', closed, 1000));
    assert.ok(await all(async () => Array.from({ length: 4 }, () => '127.0.0.1')).nothingListens('four.example', closed, 1000));
    // Refused by the policy, or not resolved: not this check's to say; it connects nowhere.
    assert.not.ok(await policy('false').nothingListens('127.0.0.1', open, 1000));
    assert.not.ok(await policy('false').nothingListens('127.0.0.1', closed, 1000));
    assert.not.ok(await policy('true').nothingListens('nowhere.example', closed, 1000));
    assert.is(connections(), 1, 'no connection past the policy');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test.run();
