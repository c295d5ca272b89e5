import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { roomFor, type HostState, type UnmeasuredSession } from '../../actors/host-room.ts';
import { SessionCost } from '../../actors/session-cost.ts';

const WINDOW_MS = 10_000;

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

// Two cores sized for 16 sessions: each session's budget is an eighth of a core.
const idle = (overrides: Partial<HostState> = {}): HostState => ({
  cores: 2,
  capacity: 16,
  sessions: 0,
  measuredCores: 0.05,
  unmeasured: [],
  behindForMs: 0,
  windowMs: WINDOW_MS,
  now: 0,
  ...overrides,
});

/** How many creates in a row the host takes, each unmeasured and costing nothing yet. */
function inARow(state: HostState): number {
  const unmeasured: UnmeasuredSession[] = [];
  while (roomFor({ ...state, sessions: unmeasured.length, unmeasured }).fits) unmeasured.push({ cores: 0, measuredAt: WINDOW_MS });
  return unmeasured.length;
}

test('an idle two-core host sized for 16 takes 16 creates in a row', () => {
  assert.is(inARow(idle()), 16);
});

test('creates are taken while some cores are free beside the measured load', () => {
  // 0.3 + 13 x 0.125 = 1.925 cores: the 14th still fits, and takes the host past its cores.
  assert.is(inARow(idle({ measuredCores: 0.3 })), 14);
  assert.is(inARow(idle({ capacity: 1 })), 1, 'a host sized for one session takes it');
});

test('a warming session is charged its budget once, not its budget and what it already costs', () => {
  // Eight sessions warming up together on a host sized for 10: each has shown 0.15 of its 0.2
  // cores, all in the measured load (0.2 of the host's own + 8 x 0.15 = 1.4 cores). Charged
  // twice they would leave no room (1.4 + 8 x 0.2 = 3.0); charged once they leave 0.2.
  const unmeasured = Array.from({ length: 8 }, () => ({ cores: 0.15, measuredAt: 5000 }));
  const state = idle({ capacity: 10, sessions: 8, measuredCores: 1.4, unmeasured });
  assert.equal(roomFor(state), { fits: true });
  const heavier = unmeasured.map(() => ({ cores: 0.25, measuredAt: 5000 }));
  assert.equal(roomFor({ ...state, measuredCores: 2.2, unmeasured: heavier }), { fits: false, retryAfterMs: WINDOW_MS }, 'past the cores by measure alone');
});

test('a refusal by reservations says when enough of them are expected to end', () => {
  // 1.5 cores measured and 6 reservations of 0.125 are 0.25 past the cores: 3 must end.
  const unmeasured = [4000, 6000, 7000, 9000, 9500, 10_000].map((measuredAt) => ({ cores: 0, measuredAt }));
  const room = roomFor(idle({ sessions: 10, measuredCores: 1.5, unmeasured, now: 1000 }));
  assert.equal(room, { fits: false, retryAfterMs: 6000 });
});

test('a host whose measured load alone is full expects room no sooner than a window', () => {
  assert.equal(roomFor(idle({ measuredCores: 2 })), { fits: false, retryAfterMs: WINDOW_MS });
});

test('a host that is behind refuses until it may keep up, even with cores to spare', () => {
  assert.equal(roomFor(idle({ behindForMs: 14_000 })), { fits: false, retryAfterMs: 14_000 });
  assert.equal(roomFor(idle({ behindForMs: 200 })), { fits: false, retryAfterMs: 1000 }, 'at least a second');
});

test('HOST_CAPACITY sessions is the ceiling, however light they are', () => {
  assert.equal(roomFor(idle({ sessions: 16, measuredCores: 0.2 })), { fits: false, retryAfterMs: WINDOW_MS });
});

test('a session is measured once it has been working for a whole window, and its cost is over that window', () => {
  const time = clock();
  const cost = new SessionCost(WINDOW_MS, time.now);
  time.advance(3000);
  assert.not.ok(cost.measured, 'no media yet: its cost is still unknown');
  assert.is(cost.measuredAt(), time.now() + WINDOW_MS);
  cost.working();
  const workingAt = time.now();
  for (let s = 0; s < 12; s++) {
    time.advance(1000);
    cost.add(0.1);
  }
  assert.ok(cost.measured);
  cost.working();
  assert.is(cost.measuredAt(), workingAt + WINDOW_MS, 'the window starts when media first flowed');
  assert.ok(Math.abs(cost.cores() - 0.1) < 1e-9, `0.1 CPU seconds a second is 0.1 cores, got ${cost.cores()}`);
  time.advance(WINDOW_MS);
  assert.is(cost.cores(), 0, 'what was spent leaves the window');
});

test('a burst in a session\'s first moment does not read as many cores', () => {
  const time = clock();
  const cost = new SessionCost(WINDOW_MS, time.now);
  cost.add(0.3);
  assert.is(cost.cores(), 0.3, 'spread over at least a second');
  time.advance(3000);
  const near = (value: number, expected: number) => Math.abs(value - expected) < 1e-9;
  assert.ok(near(cost.cores(), 0.1), 'and over the time since it opened while that is under a window');
  cost.add(-1);
  cost.add(Number.NaN);
  assert.ok(near(cost.cores(), 0.1), 'nothing negative or unreadable is added');
});

test.run();
