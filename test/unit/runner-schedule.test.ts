// Which lane of the test runner takes which file (ops/testing/schedule.ts).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { Scheduler } from '../../ops/testing/schedule.ts';

const FILES = ['unit/b.test.ts', 'integration/sessions-api.test.ts', 'integration/face-emotions.test.ts', 'unit/a.test.ts', 'integration/ingest-streams.test.ts'];

test('a worker takes from its queues in order, the known long files first, then by name', () => {
  const scheduler = new Scheduler(FILES);
  const taken: string[] = [];
  for (let file = scheduler.next(['servers', 'unit']); file; file = scheduler.next(['servers', 'unit'])) taken.push(file);
  assert.equal(taken, ['integration/ingest-streams.test.ts', 'integration/sessions-api.test.ts', 'unit/a.test.ts', 'unit/b.test.ts']);
  // The media-heavy file is left to the worker that takes them.
  assert.is(scheduler.next(['media', 'servers', 'unit']), 'integration/face-emotions.test.ts');
});

test('whether a worker has a file left: only the queues it takes from count', () => {
  const scheduler = new Scheduler(FILES);
  assert.ok(scheduler.hasFileFor(['servers', 'unit']));
  while (scheduler.next(['servers', 'unit'])) {
    // drained
  }
  assert.not.ok(scheduler.hasFileFor(['servers', 'unit']));
  assert.ok(scheduler.hasFileFor(['media']));
  scheduler.next(['media']);
  assert.not.ok(scheduler.hasFileFor(['media', 'servers', 'unit']));
  assert.not.ok(new Scheduler([]).hasFileFor(['media', 'servers', 'unit']));
});

test.run();
