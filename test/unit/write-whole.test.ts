// bus/write-whole.ts: a file is replaced whole, and a write that fails leaves nothing of its own.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from '../../ops/support/uvu.ts';
import { writeWhole } from '../../bus/write-whole.ts';

const dir = mkdtempSync(join(tmpdir(), 'write-whole-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a file is replaced by the new content, with nothing else left in its folder', async () => {
  const file = join(dir, 'record.json');
  writeFileSync(file, 'old');
  await writeWhole(file, 'new');
  assert.is(readFileSync(file, 'utf8'), 'new');
  assert.equal(readdirSync(dir), ['record.json']);
});

test('a write that cannot be put in place fails, and leaves no partial file behind', async () => {
  // A folder with a file in it cannot be renamed over.
  const target = join(dir, 'occupied');
  mkdirSync(target);
  writeFileSync(join(target, 'inside'), '');
  await writeWhole(target, 'content').then(() => assert.unreachable('it was written'), (error: NodeJS.ErrnoException) => assert.ok(error.code));
  assert.equal(readdirSync(dir).sort(), ['occupied', 'record.json']);
});

test.run();
