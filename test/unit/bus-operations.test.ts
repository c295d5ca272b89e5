// Each operation is served where bus/operations.ts says it is answered, and only there: read
// from the sources, the first argument after the connection of every serve() call.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { operations, type Operation, type Service } from '../../bus/operations.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVICES: Service[] = ['actors', 'storage'];

/** The operations a source text serves: `serve(<connection>, '<operation>'`. */
const served = (source: string) => [...source.matchAll(/\bserve\(\s*[\w.]+,\s*'([\w.]+)'/g)].map((match) => match[1]!);

function servedIn(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => served(readFileSync(join(ROOT, folder, file), 'utf8')));
}

test('the reading of serve() calls finds what a responder serves', () => {
  assert.equal(served("serve(nc, 'sessions.get', h);\nthis.sub = serve(this.parts.nc, 'sessions.create', (r) => r);\nport.serve((r) => r);"), [
    'sessions.get',
    'sessions.create',
  ]);
});

test('every operation is served by the service bus/operations.ts names, once, and by no other', () => {
  const found = Object.fromEntries(SERVICES.map((service) => [service, servedIn(service).sort()]));
  const expected = Object.fromEntries(
    SERVICES.map((service) => [service, (Object.keys(operations) as Operation[]).filter((name) => operations[name].answeredBy === service).sort()]),
  );
  assert.equal(found, expected);
  assert.equal([...servedIn('gateway'), ...servedIn('bus')], []);
});

test.run();
