// docs/configuration.md lists every variable bus/config.ts (the service) and
// ops/testing/runner-config.ts (the test runner) read, and only those: all are read as text, the
// sources for their read.<kind>('NAME', ...) calls, the document for the backquoted names in the
// first column of its tables.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Names passed to the Environment reader: `read.number('GATEWAY_PORT', 8080)`, `read.optionalText('X')`. */
const readIn = (source: string) => [...source.matchAll(/\bread\.\w+\(\s*'([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1]!);

/** Names in a table's first column: `| \`A\`, \`B\` | ...`. */
const documentedIn = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!));

const sorted = (names: string[]) => [...new Set(names)].sort();

test('the readings find the names in both shapes', () => {
  assert.equal(readIn("gatewayHost: read.text('GATEWAY_HOST', '127.0.0.1'),\n  x: read.optionalText(\n 'AUTH_TOKENS_FILE'),\n env.OTHER"), ['GATEWAY_HOST', 'AUTH_TOKENS_FILE']);
  assert.equal(documentedIn('| variable | default |\n|---|---|\n| `GATEWAY_PORT` | `8080` |\n| `A_B`, `C` | `1`, `2` |\n| see `NOT_A_ROW` |'), ['GATEWAY_PORT', 'A_B', 'C']);
});

test('every variable the service and the test runner read is in docs/configuration.md, and every one there is read', () => {
  const read = sorted(['bus/config.ts', 'ops/testing/runner-config.ts'].flatMap((file) => readIn(readFileSync(join(ROOT, file), 'utf8'))));
  const documented = sorted(documentedIn(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8')));
  assert.ok(read.length > 40, `${read.length} variables read`);
  assert.equal(read.filter((name) => !documented.includes(name)), [], 'read but not documented');
  assert.equal(documented.filter((name) => !read.includes(name)), [], 'documented but not read');
});

test.run();
