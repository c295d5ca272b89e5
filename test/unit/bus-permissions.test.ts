// The NATS users of bus/permissions.ts: each kind may call and answer what its code calls and
// serves (read from the sources, as bus-operations.test.ts reads them), production's
// configuration holds the same lists, and ids become subject tokens that cannot widen a subject.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { operations, type Operation } from '../../bus/operations.ts';
import { permissions, tenantPermissions, type BusUser } from '../../bus/permissions.ts';
import { subjects, subjectToken, tenantOf } from '../../bus/subjects.ts';
import { PRODUCTION_CONF, withServiceUsers } from '../../ops/production/nats-users.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDERS: Record<BusUser, string> = { gateway: 'gateway', host: 'actors', storage: 'storage' };

function operationsIn(folder: string, pattern: RegExp): Operation[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => [...readFileSync(join(ROOT, folder, file), 'utf8').matchAll(pattern)].map((match) => match[1] as Operation));
}

for (const [user, folder] of Object.entries(FOLDERS) as [BusUser, string][]) {
  test(`${user}: may call what ${folder}/ calls and answer what it serves, nothing else`, () => {
    const { publish, subscribe } = permissions(user);
    const called = operationsIn(folder, /\bcall\(\s*[\w.]+,\s*'([\w.]+)'/g);
    const served = operationsIn(folder, /\bserve\(\s*[\w.]+,\s*'([\w.]+)'/g);
    for (const name of called) assert.ok(publish.includes(operations[name].subject), `${user} may send ${name}`);
    for (const name of served) assert.ok(subscribe.includes(operations[name].subject), `${user} may answer ${name}`);
    const answerable = subscribe.filter((subject) => subject === subjects.create || subject === subjects.room || subject.startsWith('emo.api.'));
    assert.equal(answerable.sort(), [...new Set(served.map((name) => operations[name].subject))].sort(), `${user} answers only what it serves`);
  });
}

test('the gateway calls through bus/rpc.ts, so it may send every operation but those hosts send', () => {
  const { publish, subscribe, answers } = permissions('gateway');
  assert.ok(publish.includes(operations['sessions.get'].subject) && publish.includes(subjects.room));
  assert.not.ok(publish.includes(operations['sessions.purge'].subject));
  assert.not.ok(publish.includes(operations['sessions.archived'].subject));
  assert.not.ok([...publish, ...subscribe].some((subject) => subject.startsWith('$KV') || subject.startsWith('$JS')), 'no bucket, no stream');
  assert.not.ok(publish.some((subject) => subject.startsWith('_INBOX')) || answers, 'answers nothing');
});

test('a responder replies to the inboxes of the kinds that call it, and only those', () => {
  assert.equal(permissions('host').publish.filter((subject) => subject.startsWith('_INBOX')), ['_INBOX.gateway.>']);
  assert.equal(permissions('storage').publish.filter((subject) => subject.startsWith('_INBOX')), ['_INBOX.gateway.>', '_INBOX.host.>']);
});

test('production\'s configuration holds the users bus/permissions.ts gives (node --import tsx ops/production/nats-users.ts writes them)', () => {
  const conf = readFileSync(PRODUCTION_CONF, 'utf8');
  assert.is(withServiceUsers(conf), conf);
  assert.ok(conf.includes('"emo.live.*.*.*.worker_state"'));
});

test('ids become one subject token each; two ids never share one', () => {
  assert.is(subjectToken('alice-42_x'), 'alice-42_x');
  for (const id of ['a.b', 'a*', '>', 'alice@example.com', 'x y', '', 'é', '~abc', 'a'.repeat(65)]) {
    assert.match(subjectToken(id), /^~[0-9a-f]{32}$/, id);
  }
  assert.is.not(subjectToken('a.b'), subjectToken('a_b'));
  assert.is(tenantOf({ product: 'acme', user: 'carol' }), 'acme.carol');
  assert.is(subjects.row('feedfacefeedfacefeedface', tenantOf({ product: 'acme', user: 'carol' }), 'face'), 'emo.rows.feedfacefeedfacefeedface.acme.carol.face');
});

test('a tenant may read its own live results and publish nothing', () => {
  assert.equal(tenantPermissions('acme.carol'), { publish: [], subscribe: ['emo.rows.*.acme.carol.>', 'emo.live.*.acme.carol.>'] });
  assert.equal(tenantPermissions('acme').subscribe, ['emo.rows.*.acme.>', 'emo.live.*.acme.>']);
});

test.run();
