// docs/configuration.md lists every variable the service (bus/config.ts), the tools
// (ops/ops-config.ts) and the test runner (ops/testing/runner-config.ts) read, and only those,
// under the heading of the section whose reader reads it: all are read as text, the sources for
// their read.<kind>('NAME', ...) calls inside each reader, the document for the backquoted names
// in the first column of the table under each heading.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** The document's headings, in the order of the sources, each with the reader whose variables it lists. */
const SECTIONS = [
  { heading: 'Every process (shared)', file: 'bus/config.ts', reader: 'sharedSettings' },
  { heading: 'Gateway', file: 'bus/config.ts', reader: 'gatewaySettings' },
  { heading: 'Actor host', file: 'bus/config.ts', reader: 'hostSettings' },
  { heading: 'Storage service', file: 'bus/config.ts', reader: 'storageSettings' },
  { heading: 'Tooling (npm start, setup, benchmarks)', file: 'ops/ops-config.ts', reader: 'readOpsConfig' },
  { heading: 'Test runner', file: 'ops/testing/runner-config.ts', reader: 'readRunnerConfig' },
];

/** Names passed to the Environment reader: `read.number('GATEWAY_PORT', 8080)`, `read.optionalText('X')`. */
const readIn = (source: string) => [...source.matchAll(/\bread\.\w+\(\s*'([A-Z][A-Z0-9_]*)'/g)].map((match) => match[1]!);

/** Names in a table's first column: `| \`A\`, \`B\` | ...`. */
const documentedIn = (markdown: string) =>
  markdown
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!));

/** A top-level function's text, from `function name(` to the `}` that closes it at the start of a line. */
const functionIn = (source: string, name: string) => {
  const start = source.indexOf(`function ${name}(`);
  assert.ok(start >= 0, `no function ${name}`);
  return source.slice(start, source.indexOf('\n}', start));
};

/** Each `### ` heading of the markdown with the text under it, up to the next heading. */
const headingsIn = (markdown: string) =>
  markdown
    .split(/^### /m)
    .slice(1)
    .map((part) => ({ heading: part.slice(0, part.indexOf('\n')), text: part.slice(part.indexOf('\n')) }));

const sorted = (names: string[]) => [...new Set(names)].sort();
const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const documentation = () => readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');

test('the readings find the names in both shapes, inside their reader, under their heading', () => {
  assert.equal(readIn("gatewayHost: read.text('GATEWAY_HOST', '127.0.0.1'),\n  x: read.optionalText(\n 'AUTH_TOKENS_FILE'),\n env.OTHER"), ['GATEWAY_HOST', 'AUTH_TOKENS_FILE']);
  assert.equal(documentedIn('| variable | default |\n|---|---|\n| `GATEWAY_PORT` | `8080` |\n| `A_B`, `C` | `1`, `2` |\n| see `NOT_A_ROW` |'), ['GATEWAY_PORT', 'A_B', 'C']);
  assert.equal(readIn(functionIn("function a(read) {\n  return { x: read.text('A', '') };\n}\n\nfunction b(read) {\n  return { y: read.text('B', '') };\n}\n", 'b')), ['B']);
  assert.equal(headingsIn('## V\n\n### One\n\n| `A` | 1 |\n\n### Two\n\n| `B` | 2 |\n'), [
    { heading: 'One', text: '\n\n| `A` | 1 |\n\n' },
    { heading: 'Two', text: '\n\n| `B` | 2 |\n' },
  ]);
});

test('every variable the service, the tools and the test runner read is in docs/configuration.md, and every one there is read', () => {
  const read = sorted([...new Set(SECTIONS.map((section) => section.file))].flatMap((file) => readIn(source(file))));
  const documented = sorted(documentedIn(documentation()));
  assert.ok(read.length > 40, `${read.length} variables read`);
  assert.equal(read.filter((name) => !documented.includes(name)), [], 'read but not documented');
  assert.equal(documented.filter((name) => !read.includes(name)), [], 'documented but not read');
});

test('each variable is read by one section and listed under its heading, the sections in the order of the sources', () => {
  const headings = headingsIn(documentation());
  const service = source('bus/config.ts');
  const starts = SECTIONS.filter((section) => section.file === 'bus/config.ts').map((section) => service.indexOf(`function ${section.reader}(`));
  assert.equal(starts, [...starts].sort((a, b) => a - b), 'the readers of bus/config.ts in the order of the headings');
  assert.equal(headings.map((section) => section.heading), SECTIONS.map((section) => section.heading));
  const everyReading = SECTIONS.flatMap((section) => readIn(functionIn(source(section.file), section.reader)));
  assert.equal(everyReading.filter((name, index) => everyReading.indexOf(name) !== index), [], 'read by more than one section');
  for (const [index, section] of SECTIONS.entries()) {
    const read = sorted(readIn(functionIn(source(section.file), section.reader)));
    assert.equal(sorted(documentedIn(headings[index]!.text)), read, `under "${section.heading}": the variables ${section.reader}() reads`);
  }
});

test.run();
