import { test } from '../support/uvu.ts';
import * as assert from 'uvu/assert';
import { roomFor, type HostState } from '../../actors/host-room.ts';
import { Reservations } from '../../actors/reservations.ts';

const WINDOW_MS = 10_000;

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

// Two cores sized for 16 sessions: each reservation is an eighth of a core.
const idle = (overrides: Partial<HostState> = {}): HostState => ({
  cores: 2,
  capacity: 16,
  sessions: 0,
  measuredCores: 0.05,
  reservationEnds: [],
  behindForMs: 0,
  windowMs: WINDOW_MS,
  now: 0,
  ...overrides,
});

/** How many creates in a row the host takes, each reserving until a window from now. */
function inARow(state: HostState): number {
  const ends: number[] = [];
  while (roomFor({ ...state, sessions: ends.length, reservationEnds: ends }).fits) ends.push(WINDOW_MS);
  return ends.length;
}

test('an idle two-core host sized for 16 takes 16 creates in a row', () => {
  assert.is(inARow(idle()), 16);
});

test('creates are taken while some cores are free beside the measured load', () => {
  // 0.3 + 13 x 0.125 = 1.925 cores: the 14th still fits, and takes the host past its cores.
  assert.is(inARow(idle({ measuredCores: 0.3 })), 14);
  assert.is(inARow(idle({ capacity: 1 })), 1, 'a host sized for one session takes it');
});

test('a refusal by reservations says when enough of them are expected to end', () => {
  // 1.5 cores measured and 6 reservations of 0.125 are 0.25 past the cores: 3 must end.
  const ends = [4000, 6000, 7000, 9000, 9500, 10_000];
  const room = roomFor(idle({ sessions: 10, measuredCores: 1.5, reservationEnds: ends, now: 1000 }));
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

test('a reservation is held until its session has been working for a window, and no longer', () => {
  const time = clock();
  const reservations = new Reservations(WINDOW_MS, time.now);
  const waiting = reservations.reserve();
  const working = reservations.reserve();
  time.advance(2000);
  reservations.working(working);
  assert.equal(reservations.expectedEnds(), [time.now() + WINDOW_MS, time.now() + WINDOW_MS]);
  time.advance(WINDOW_MS - 1);
  assert.is(reservations.count(), 2);
  time.advance(1);
  assert.is(reservations.count(), 1, 'measured for a whole window');
  assert.ok(working.released);
  assert.not.ok(waiting.released, 'no media yet: its cost is still unknown');
  reservations.working(waiting);
  reservations.working(waiting);
  time.advance(WINDOW_MS);
  assert.is(reservations.count(), 0, 'the window starts when media first flowed');
});

test('a session that stops, fails or is refused gives its reservation back at once', () => {
  const reservations = new Reservations(WINDOW_MS, clock().now);
  const stopped = reservations.reserve();
  reservations.reserve();
  reservations.release(stopped);
  assert.is(reservations.count(), 1);
  reservations.release(stopped);
  assert.is(reservations.count(), 1, 'giving one back twice frees nothing more');
});

test.run();
