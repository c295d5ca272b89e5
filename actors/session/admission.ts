// Admitting a new session: the user's quota, the client's idempotency key, where its stream may
// come from, and the caller's deadline, in the order that leaves nothing half-done. The stream's
// host name is resolved last, once the user's quota has admitted it, so a user cannot make the
// host resolve more names than it may hold sessions at once. A create that cannot finish before the
// gateway stops waiting is refused before it writes anything. A write to the bucket that fails
// may have been made all the same (its acknowledgement lost with the server that made it), so
// a create that sent it gives nothing back: its key stays claimed for the session it may have
// made, and its quota slot stays taken.
//
// A retry with the same idempotency key that finds no record of the claimed session cannot tell
// whether the earlier attempt failed, still runs, or sent a write that a new leader will make
// late. It need not: it takes the claim over and makes that same session, by id, in the slot
// the earlier attempt holds. The record is written only if absent, so of two attempts that both
// write it one makes it and the other returns it, and the client has its answer as soon as the
// bucket takes writes again. A retry that takes a claim over and then fails before its own write
// gives nothing back either: the earlier attempt's write may still land, and the key is how the
// client's next retry finds that session (without it, the next retry makes another, or is
// refused by the quota the first one fills).
import type { CreateSessionRequest, SessionRecord } from '../../bus/contracts/session.ts';
import { badRequest, notInTime, ServiceError } from '../../bus/errors.ts';
import { parseStreamUri, type StreamUri } from '../../bus/stream-uri.ts';
import { newSessionId } from '../../bus/ids.ts';
import { fingerprintOf, type IdempotencyKeys } from './idempotency.ts';
import type { UserQuotas } from './quotas.ts';
import { isConflict, type SessionRecords } from '../../bus/session-records.ts';

export interface AdmissionDeps {
  records: SessionRecords;
  quotas: UserQuotas;
  keys: IdempotencyKeys;
  hostId: string;
  sessionMaxSeconds: number;
  /** Why the stream may not be pulled, or undefined if it may (actors/egress/policy.ts). */
  streamRefusal: (stream: StreamUri) => Promise<string | undefined>;
}

export interface Admitted {
  record: SessionRecord;
  /** False when an earlier attempt with the same idempotency key made the session. */
  created: boolean;
}

// The KV write and the reply must fit in what is left of the caller's wait.
const COMMIT_MARGIN_MS = 1000;

/** What an attempt did to its user's quota: nothing, took a slot, or sent a write it could not confirm. */
type Slot = 'none' | 'taken' | 'unsure';

/** The idempotency key as this attempt holds it: its name and the claim's revision it wrote. */
interface HeldKey {
  name: string;
  revision: number;
}

export async function admitSession(
  deps: AdmissionDeps,
  { caller, body, idempotencyKey }: CreateSessionRequest,
  deadline: number,
): Promise<Admitted> {
  const now = Date.now();
  let record = newRecord(deps, caller, body, now);
  let key: HeldKey | undefined;
  /** The session is one an earlier attempt claimed, and may have sent. */
  let inherited = false;
  if (idempotencyKey !== undefined) {
    const claim = { session: record.id, fingerprint: fingerprintOf({ caller, body }), at: now };
    const result = await deps.keys.claim(caller.user, idempotencyKey, claim);
    if (!result.claimed) {
      const earlier = await deps.records.fresh(result.earlier.session);
      if (earlier) return { record: earlier.record, created: false };
      // Made and deleted since, it is made anew; else this attempt makes the one claimed.
      if ((await deps.records.ended(result.earlier.session)) !== true) {
        record = { ...record, id: result.earlier.session };
        inherited = true;
      }
      const revision = await deps.keys.reclaim(caller.user, idempotencyKey, { ...claim, session: record.id }, result.revision);
      if (revision === undefined) throw notInTime('another request with this Idempotency-Key is in progress; retry later');
      key = { name: idempotencyKey, revision };
    } else key = { name: idempotencyKey, revision: result.revision };
  }
  let sent = false;
  let slot: Slot = 'none';
  try {
    try {
      await deps.quotas.admit(caller.user, record.id, deadline - COMMIT_MARGIN_MS);
      slot = 'taken';
    } catch (error) {
      // A refusal (the quota full, or no turn in time) wrote nothing; a failure may have.
      if (!(error instanceof ServiceError)) slot = 'unsure';
      throw error;
    }
    const refusal = await deps.streamRefusal(parseStreamUri(body.streamUri));
    if (refusal) throw badRequest('invalid_body', `body.streamUri: ${refusal}`, [{ field: 'body.streamUri', message: refusal }]);
    if (Date.now() > deadline - COMMIT_MARGIN_MS) {
      throw notInTime('the host is too busy to create the session in time; nothing was created, retry later', Date.now() - now);
    }
    sent = true;
    await deps.records.create(record);
  } catch (error) {
    if (sent && isConflict(error)) {
      // Another attempt with the same key made the session first.
      const made = await deps.records.fresh(record.id);
      if (made) return { record: made.record, created: false };
    }
    // Once the record is sent, the session may exist whatever the error says (even "no
    // responders" can be the read that the KV client makes after its write timed out).
    if (!sent && !inherited) await giveBack(deps, caller.user, record.id, deadline - COMMIT_MARGIN_MS, key, slot);
    throw error;
  }
  return { record, created: true };
}

/**
 * Frees what an attempt that made no session holds: its idempotency key and its quota slot;
 * neither if a later attempt has taken the key over, whose session it now is to make. A key
 * whose release went unanswered may still be held, and a retry that finds it takes a slot again.
 */
async function giveBack(
  deps: AdmissionDeps,
  user: string,
  session: string,
  slotDeadline: number,
  key: HeldKey | undefined,
  slot: Slot,
): Promise<void> {
  const takenOver = key !== undefined && !(await deps.keys.release(user, key.name, key.revision).catch(() => true));
  // Else its slot would be held until it expires by a session that will never exist.
  if (!takenOver && slot !== 'none') await deps.quotas.release(user, session, slotDeadline, { unsure: slot === 'unsure' });
}

function newRecord(
  deps: AdmissionDeps,
  caller: CreateSessionRequest['caller'],
  body: CreateSessionRequest['body'],
  now: number,
): SessionRecord {
  return {
    id: newSessionId(now),
    name: body.name,
    type: 'live_analysis',
    state: 'active',
    createdAt: now,
    user: caller.user,
    product: caller.product,
    streamUri: body.streamUri,
    sensors: [],
    owner: deps.hostId,
    expiresAt: now + deps.sessionMaxSeconds * 1000,
    healthCheckAt: now,
    workerState: 'starting',
    mediaSeconds: 0,
  };
}
