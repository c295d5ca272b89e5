// The pacing of a pull (actors/ingest/pacing.ts): when reading is held, when it goes on, and
// when a stream counts as staying faster than real time.
import fc from 'fast-check';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { MediaPacing, PACING_LIMITS, type PacingDecision } from '../../actors/ingest/pacing.ts';

const { leadSeconds, resumeGapSeconds, windowSeconds, heldShare, driftShare } = PACING_LIMITS;

/**
 * A reader of a server that has `available(t)` seconds of media ready at wall time t (ms),
 * taking it in chunks of `chunkSeconds` whenever it is not held, as ingest.ts does: it checks
 * after each chunk and, while held, again at the time the decision names. Returns every lead
 * seen after a chunk, how far each was past the lead then allowed, and when (if ever) the
 * stream was called too fast.
 */
function simulate(available: (t: number) => number, chunkSeconds: number, untilMs: number) {
  const pacing = new MediaPacing();
  let media = 0;
  let t = 0;
  const leads: number[] = [];
  const excess: number[] = [];
  let tooFastAt: number | undefined;
  let decision: PacingDecision = { hold: false, tooFast: false };
  while (t < untilMs && tooFastAt === undefined) {
    if (decision.hold) {
      t = Math.max(t + 1, decision.resumeAt ?? t);
      decision = pacing.update(media, t);
    } else if (available(t) >= media + chunkSeconds) {
      media += chunkSeconds;
      decision = pacing.update(media, t);
      leads.push(pacing.lead(media, t));
      excess.push(pacing.lead(media, t) - pacing.allowedLead(t));
    } else {
      t += 10;
      decision = pacing.update(media, t);
    }
    if (decision.tooFast) tooFastAt = t;
  }
  return { leads, excess, tooFastAt, media, t };
}

test('a stream at real time is never held', () => {
  const pacing = new MediaPacing();
  for (let ms = 0; ms <= 600_000; ms += 250) {
    const decision = pacing.update(ms / 1000 + 0.25, ms);
    assert.not.ok(decision.hold, `held at ${ms} ms`);
    assert.not.ok(decision.tooFast);
  }
});

test('media ahead by more than the lead is held until it falls back by the gap', () => {
  const pacing = new MediaPacing();
  assert.not.ok(pacing.update(leadSeconds, 0).hold);
  const held = pacing.update(leadSeconds + 0.5, 0);
  assert.ok(held.hold);
  assert.is(held.resumeAt, Math.ceil(((0.5 + resumeGapSeconds) / (1 + driftShare)) * 1000));
  assert.ok(pacing.update(leadSeconds + 0.5, 1000).hold, 'still ahead by more than lead - gap');
  assert.not.ok(pacing.update(leadSeconds + 0.5, 1500).hold);
  assert.is(pacing.heldSeconds(1500), 1.5);
});

test('a start-up burst of 10 s, then real time, is never held nor too fast', () => {
  const run = simulate((t) => (t < 500 ? 10 : 10 + t / 1000), 0.1, 300_000);
  assert.is(run.tooFastAt, undefined);
  assert.ok(Math.max(...run.leads) <= leadSeconds);
});

test('a start-up burst of 10 s from an encoder whose clock runs 0.2 % fast is never stopped in 12 hours', () => {
  const run = simulate((t) => 10 + (1.002 * t) / 1000, 1, 12 * 3600_000);
  assert.is(run.tooFastAt, undefined);
});

test('a burst of 20 s, beyond the lead, leaves media waiting from then on: held, then too fast', () => {
  // Nothing tells such a stream from a file pushed at wire speed: it always has media ready.
  const run = simulate((t) => 20 + t / 1000, 0.1, 300_000);
  assert.ok(run.tooFastAt !== undefined);
});

test('bursts of several seconds every few seconds (real time on average) are not too fast', () => {
  const run = simulate((t) => Math.floor(t / 8000) * 8 + 8, 0.1, 600_000);
  assert.is(run.tooFastAt, undefined);
});

test('a file pushed at wire speed is too fast once held over half the window', () => {
  const run = simulate(() => Number.POSITIVE_INFINITY, 0.25, 600_000);
  assert.ok(run.tooFastAt !== undefined, 'called too fast');
  const heldLimitMs = windowSeconds * heldShare * 1000;
  assert.ok(run.tooFastAt > heldLimitMs && run.tooFastAt < heldLimitMs + 5000, `at ${run.tooFastAt} ms`);
  assert.ok(run.media <= (run.t / 1000) * (1 + driftShare) + leadSeconds + 0.25, `media ${run.media} s at ${run.t} ms`);
});

test('twice real time, in bursts or not, is called too fast within a minute or two', () => {
  const steady = simulate((t) => (2.5 * t) / 1000, 0.1, 600_000);
  assert.ok(steady.tooFastAt !== undefined && steady.tooFastAt < 120_000, `steady: ${steady.tooFastAt}`);
  const bursts = simulate((t) => Math.floor(t / 5000) * 15, 0.1, 600_000);
  assert.ok(bursts.tooFastAt !== undefined && bursts.tooFastAt < 120_000, `bursts: ${bursts.tooFastAt}`);
});

test('a stream 1.3 times real time is stopped once its lead is reached and it is held half a minute', () => {
  const run = simulate((t) => (1.3 * t) / 1000, 0.1, 600_000);
  // The lead is reached after about 40 s (12 s at 0.3 s a second), then 30 s held.
  assert.ok(run.tooFastAt !== undefined && run.tooFastAt > 60_000 && run.tooFastAt < 90_000, `at ${run.tooFastAt}`);
});

test('holds older than the window are forgotten', () => {
  const pacing = new MediaPacing();
  pacing.update(leadSeconds + 20, 0); // held from 0 until the lead is back under
  const decision = pacing.update(leadSeconds + 20, 21_000);
  assert.not.ok(decision.hold);
  assert.is(pacing.heldSeconds(21_000), 21);
  assert.is(pacing.heldSeconds(71_000), 10);
  assert.is(pacing.heldSeconds(81_001), 0);
});

test('property: after any chunk the lead is at most the one allowed plus that chunk, whatever arrives when', () => {
  const arrival = fc.record({
    // Media the server has at the start, and bursts: at each step, seconds of media delivered at once.
    initial: fc.double({ min: 0, max: 30, noNaN: true }),
    bursts: fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 20_000 }), seconds: fc.double({ min: 0, max: 60, noNaN: true }) }), { maxLength: 30 }),
    chunkSeconds: fc.double({ min: 0.01, max: 2.5, noNaN: true }),
  });
  fc.assert(
    fc.property(arrival, ({ initial, bursts, chunkSeconds }) => {
      let at = 0;
      const steps = bursts.map(({ afterMs, seconds }) => ({ at: (at += afterMs), seconds }));
      const available = (t: number) => initial + steps.filter((step) => step.at <= t).reduce((sum, step) => sum + step.seconds, 0);
      const run = simulate(available, chunkSeconds, at + 120_000);
      return run.excess.every((excess) => excess <= chunkSeconds + 1e-9);
    }),
    { numRuns: 300 },
  );
});

test.run();
