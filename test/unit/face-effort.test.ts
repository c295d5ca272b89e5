// The face effort policy per stream (actors/face/face-effort.ts), on a fake clock: which stream
// is lowered when the thread drops frames, how far, when it goes back up, and when the thread
// says it is saturated.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { FACE_EFFORT_LADDER, FaceEffort, MIN_DETECTABLE_FACE_PX, type EffortReview, type StreamEffort } from '../../actors/face/face-effort.ts';

const [FULL, REDUCED, LEAST] = FACE_EFFORT_LADDER;
/** FACE_EFFORT_CALM_SECONDS's default. */
const CALM_MS = 20_000;
/** The ingest's analysis frame of a 1280x720 stream. */
const FRAME = { width: 640, height: 360 };
/** Faces of 48 px in 1280x720: 24 px in the analysis frame, 18 px at 480, 12 px at 320. */
const SMALL_FACE = 24;
const LARGE_FACE = 80;

interface Load {
  frames: number;
  dropped: number;
  /** Seconds of the thread's work the stream cost in the second. */
  work: number;
  faces: number[];
}

function setUp() {
  let now = 1_000_000;
  const policy = new FaceEffort(CALM_MS, () => now);
  const streams = new Map<number, StreamEffort>();
  const open = (id: number) => streams.set(id, policy.open(id)).get(id)!;
  /** One second: each stream's frames and work as `load` says, then the review. */
  const second = (load: Record<number, Partial<Load>>, busyShare = 1): EffortReview => {
    for (const [id, stream] of streams) {
      const { frames = 16, dropped = 0, work = 0.1, faces = [LARGE_FACE] } = load[id] ?? {};
      for (let i = 0; i < frames; i++) {
        stream.offered(i < dropped);
        if (i >= dropped) stream.tracked(faces, FRAME);
      }
      stream.worked(work);
    }
    now += 1000;
    return policy.review(busyShare);
  };
  const levels = () => [...streams.values()].map((stream) => stream.level);
  /** The streams' first look (10 s at full effort, whatever the drops): their floors are known after it. */
  const look = () => {
    for (let s = 0; s < 10; s++) assert.equal(second({}, 1).changed, []);
  };
  return { policy, open, second, levels, look };
}

test("a stream's own burst (frames replacing one another at once) lowers nobody; drops at its rate do", () => {
  let now = 1_000_000;
  const policy = new FaceEffort(CALM_MS, () => now);
  const bursting = policy.open(0, 4);
  const steady = policy.open(1, 4);
  // A burst's frames replace one another within a millisecond; at the stream's rate a frame replaced has waited 250 ms.
  const second = (burst: number, droppedAtRate: number) => {
    for (let i = 0; i < burst; i++) bursting.offered(i > 0, 1);
    for (let i = 0; i < 4; i++) steady.offered(i < droppedAtRate, 250);
    for (const stream of [bursting, steady]) {
      stream.tracked([LARGE_FACE], FRAME);
      stream.worked(0.1);
    }
    now += 1000;
    return policy.review(1);
  };
  for (let s = 0; s < 10; s++) second(4, 0);
  for (let s = 0; s < 20; s++) assert.equal(second(48, 0).changed, [], 'a burst of 48 frames a second, 47 replaced');
  const changes = [];
  for (let s = 0; s < 10; s++) changes.push(...second(4, 1).changed);
  assert.ok(changes.length > 0, 'a frame in four dropped at the stream\'s own rate is the thread behind');
});

test('the figure the floor keeps is the measured one', () => {
  assert.is(MIN_DETECTABLE_FACE_PX, 16, 'ops/bench/README-small-faces.md, "The smallest face a step keeps"');
});

test('a thread that keeps up leaves every stream at full effort, however busy', () => {
  const { open, second, levels, look } = setUp();
  open(0);
  open(1);
  look();
  for (let s = 0; s < 30; s++) assert.equal(second({}, 0.95), { changed: [] });
  assert.equal(levels(), [0, 0]);
});

test('past 1 % of frames dropped within 5 s the most expensive stream goes a step down, and only it', () => {
  const { open, second, levels, look } = setUp();
  const cheap = open(0);
  open(1);
  look();
  for (let s = 0; s < 4; s++) assert.equal(second({ 0: { work: 0.05 }, 1: { work: 0.5 } }).changed, []);
  assert.equal(second({ 0: { work: 0.05, dropped: 1 }, 1: { work: 0.5 } }).changed, [], '1 of 160 frames is under 1 %');
  const lowered = second({ 0: { work: 0.05, dropped: 1 }, 1: { work: 0.5 } });
  assert.equal(lowered.changed, [{ stream: 1, level: 1 }], '2 of 160 is over it');
  assert.equal(levels(), [0, 1]);
  assert.equal(cheap.current, FULL);
  // What it was chosen among, as the streams stood: each at full effort above its floor, the
  // chosen one with the most of the thread's work within 5 s.
  assert.equal(lowered.chosenAmong?.map(({ stream, level, floor }) => ({ stream, level, floor })), [{ stream: 0, level: 0, floor: 2 }, { stream: 1, level: 0, floor: 2 }]);
  const work = new Map(lowered.chosenAmong!.map((weighed) => [weighed.stream, weighed.work]));
  assert.ok(work.get(1)! > work.get(0)!, `the chosen stream the costliest: ${JSON.stringify(lowered.chosenAmong)}`);
});

test('each step is judged on 5 s of its own frames; the next goes to the costliest stream still above its floor', () => {
  const { open, second, levels, look } = setUp();
  open(0);
  open(1);
  look();
  const heavy = { 0: { work: 0.1, dropped: 2 }, 1: { work: 0.6, dropped: 2 } };
  assert.equal(second(heavy).changed, [{ stream: 1, level: 1 }]);
  for (let s = 1; s < 5; s++) assert.equal(second(heavy).changed, [], `${s} s at the new step: frames waiting from the old one`);
  assert.equal(second(heavy).changed, [{ stream: 1, level: 2 }], 'still the costliest');
  assert.equal(levels(), [0, 2]);
  for (let s = 1; s < 5; s++) second(heavy);
  assert.equal(second(heavy).changed, [{ stream: 0, level: 1 }], 'the costliest is at the last step: the next one');
});

test('a stream is never lowered below the step its smallest tracked face needs', () => {
  const { open, second, levels, look } = setUp();
  const small = open(0);
  open(1);
  look();
  // Four faces, the smallest 24 px wide: 18 px at 480 still found, 12 px at 320 not.
  const load = { 0: { work: 0.8, dropped: 3, faces: [SMALL_FACE, 26, 30, 34] }, 1: { work: 0.1, dropped: 3 } };
  const changes: EffortReview['changed'] = [];
  for (let s = 0; s < 40; s++) changes.push(...second(load).changed);
  assert.equal(changes, [{ stream: 0, level: 1 }, { stream: 1, level: 1 }, { stream: 1, level: 2 }]);
  assert.equal(small.current, REDUCED, 'the small faces stay at 480 px');
  assert.equal(levels(), [1, 2]);
});

test('only once every stream is at its floor and frames are still dropped is the thread saturated, and says so once', () => {
  const { open, second, look } = setUp();
  open(0);
  open(1);
  look();
  const load = { 0: { work: 0.5, dropped: 6, faces: [SMALL_FACE] }, 1: { work: 0.3, dropped: 6, faces: [12] } };
  const saturations: EffortReview['saturated'][] = [];
  let atFloor = -1;
  for (let s = 0; s < 30; s++) {
    const review = second(load);
    if (review.saturated) saturations.push(review.saturated);
    if (review.changed.length > 0) atFloor = s;
    assert.ok(!review.saturated?.saturated || s >= atFloor + 5, 'not before the last step has been judged');
  }
  // 12 px faces: 9 px at 480, below the minimum, so that stream stays at full effort.
  assert.equal(saturations.length, 1);
  assert.is(saturations[0]!.saturated, true);
  assert.match(saturations[0]!.detail!, /7\.5 % of frames dropped within 5 s with each of 2 streams at its floor/);
  // As the drops age out of the window the share falls under 5 %: no longer saturated, said once.
  const after: EffortReview['saturated'][] = [];
  for (let s = 0; s < 6; s++) after.push(second({ 0: { faces: [SMALL_FACE] }, 1: { faces: [12] } }).saturated);
  assert.equal(after.filter(Boolean), [{ saturated: false }]);
  assert.equal(after[0], undefined, 'the first second after still holds over 5 %');
});

test('a single stream, or a few frames dropped, never saturates the thread: that is the stream\'s own matter', () => {
  const { open, second, look } = setUp();
  open(0);
  look();
  // One stream at its floor (12 px faces keep full effort) dropping a third of its frames.
  for (let s = 0; s < 20; s++) assert.is(second({ 0: { dropped: 5, faces: [12] } }).saturated, undefined);
  open(1);
  look();
  // Two streams at their floor dropping about 3 % together: still not a full host.
  for (let s = 0; s < 20; s++) assert.not.ok(second({ 0: { dropped: 1, faces: [12] }, 1: { faces: [12] } }).saturated?.saturated);
});

test('a stream over its budget goes down first, a step a review to its floor, even when nothing is dropped', () => {
  const { policy, open, second, levels, look } = setUp();
  open(0);
  open(1);
  look();
  policy.setOverBudget(0, true);
  assert.equal(second({ 0: { work: 0.1 }, 1: { work: 0.7 } }).changed, [{ stream: 0, level: 1 }]);
  assert.equal(second({ 0: { work: 0.1 }, 1: { work: 0.7, dropped: 5 } }).changed, [{ stream: 0, level: 2 }], 'before the costlier stream');
  for (let s = 0; s < 4; s++) assert.equal(second({ 1: { work: 0.7, dropped: 5 } }).changed, []);
  assert.equal(second({ 1: { work: 0.7, dropped: 5 } }).changed, [{ stream: 1, level: 1 }], 'at its floor: the others in turn');
  policy.setOverBudget(0, false);
  const calm = { 0: { work: 0.05 }, 1: { work: 0.7 } };
  for (let s = 0; s < CALM_MS / 1000 - 1; s++) second(calm, 0.3);
  assert.equal(second(calm, 0.3).changed, [{ stream: 0, level: 1 }], 'back within its budget: up again, the cheaper stream first');
  assert.equal(levels(), [1, 1]);
});

test('an over-budget stream stops at its floor', () => {
  const { policy, open, second, levels, look } = setUp();
  open(0);
  look();
  policy.setOverBudget(0, true);
  for (let s = 0; s < 10; s++) second({ 0: { faces: [SMALL_FACE] } }, 0.2);
  assert.equal(levels(), [1]);
});

test('back up one stream and one step at a time, after 20 s without drops and with the thread idle half the time', () => {
  const { open, second, levels, look } = setUp();
  open(0);
  open(1);
  look();
  const heavy = { 0: { work: 0.5, dropped: 4, faces: [SMALL_FACE] }, 1: { work: 0.3, dropped: 4 } };
  for (let s = 0; s < 6; s++) second(heavy);
  assert.equal(levels(), [1, 1]);
  const calm = { 0: { work: 0.5, faces: [SMALL_FACE] }, 1: { work: 0.3 } };
  for (let s = 0; s < 30; s++) assert.equal(second(calm, 0.6).changed, [], 'busy 60 % of the time: more might not fit');
  for (let s = 1; s < 20; s++) assert.equal(second(calm, 0.4).changed, [], `${s} s calm`);
  assert.equal(second(calm, 0.4).changed, [{ stream: 1, level: 0 }], 'the cheaper stream first');
  second(calm, 0.7);
  for (let s = 1; s < 20; s++) assert.equal(second(calm, 0.4).changed, [], 'each step waits 20 s of calm of its own; a busy second starts them again');
  assert.equal(second(calm, 0.4).changed, [{ stream: 0, level: 0 }]);
  assert.equal(levels(), [0, 0]);
});

test('a stream whose faces became too small for its step goes back up to its floor at once', () => {
  const { open, second, levels, look } = setUp();
  const stream = open(0);
  look();
  for (let s = 0; s < 12; s++) second({ 0: { dropped: 4 } });
  assert.equal(stream.current, LEAST);
  assert.equal(second({ 0: { faces: [SMALL_FACE] } }).changed, [{ stream: 0, level: 1 }]);
  assert.equal(levels(), [1]);
});

test('the floor remembers the smallest face for 30 s', () => {
  const { open, second, levels, look } = setUp();
  open(0);
  look();
  assert.equal(second({ 0: { faces: [SMALL_FACE], dropped: 4 } }).changed, [{ stream: 0, level: 1 }]);
  let lowered = -1;
  for (let s = 1; s < 40 && lowered < 0; s++) if (second({ 0: { faces: [], dropped: 4 } }).changed.length > 0) lowered = s;
  assert.is(lowered, 30, 'the step to 320 px once the small face is 30 s old');
  assert.equal(levels(), [2]);
});

test('a new stream keeps full effort for its first 10 s, whatever the drops: its faces set its floor', () => {
  const { open, second, levels } = setUp();
  open(0);
  for (let s = 0; s < 9; s++) assert.equal(second({ 0: { dropped: 8, faces: [] } }), { changed: [] }, `${s + 1} s analysed: not lowered, and not saturated`);
  assert.equal(second({ 0: { dropped: 8, faces: [] } }).changed, [{ stream: 0, level: 1 }], 'no face seen: nothing holds it');
  assert.equal(levels(), [1]);
});

test('a closed stream leaves the policy', () => {
  const { policy, open, second, look } = setUp();
  open(0);
  open(1);
  look();
  policy.close(1);
  assert.equal(second({ 0: { work: 0.1, dropped: 4 } }).changed, [{ stream: 0, level: 1 }]);
});

test.run();
