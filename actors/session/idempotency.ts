// Idempotency keys for session creation: a client that retries a create (its first attempt
// timed out, or the connection broke) with the same `Idempotency-Key` gets the session the
// first attempt made instead of a second one. A key is claimed in a KV bucket by create, so of
// two concurrent attempts exactly one creates; keys expire with the bucket's age limit. Each
// attempt that holds the claim knows it by the revision it wrote, so an attempt that failed
// gives the key back only if no later attempt has taken the claim over since.
import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openBucket } from '../../bus/bucket.ts';
import { badRequest } from '../../bus/errors.ts';
import { buckets } from '../../bus/subjects.ts';
import { isConflict } from '../../bus/session-records.ts';

export interface Claim {
  /** The session the first attempt creates. */
  session: string;
  /** A hash of the request: the same key with another request is the client's mistake. */
  fingerprint: string;
  at: number;
}

/** The claim's revision: the attempt that wrote it holds the key until another writes it. */
export type ClaimResult = { claimed: true; revision: number } | { claimed: false; earlier: Claim; revision: number };

export class IdempotencyKeys {
  private constructor(private readonly kv: KV) {}

  static async open(js: JetStreamClient, keepMs: number, replicas: number): Promise<IdempotencyKeys> {
    const kv = await openBucket(js, buckets.idempotency, { replicas, ttlMs: keepMs });
    return new IdempotencyKeys(kv);
  }

  /** Claims the key for `claim.session`, or tells which session an earlier attempt claimed it for. */
  async claim(user: string, key: string, claim: Claim): Promise<ClaimResult> {
    const id = keyOf(user, key);
    try {
      return { claimed: true, revision: await this.kv.create(id, JSON.stringify(claim)) };
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    const entry = await this.kv.get(id);
    // Released or expired in between: claim it again.
    if (!entry || entry.operation !== 'PUT') return this.claim(user, key, claim);
    const earlier = entry.json<Claim>();
    if (earlier.fingerprint !== claim.fingerprint) {
      throw badRequest('idempotency_key_reused', 'header.idempotency-key: was used for a different request', [
        { field: 'header.idempotency-key', message: 'was used for a different request' },
      ]);
    }
    return { claimed: false, earlier, revision: entry.revision };
  }

  /**
   * Takes over the claim at `revision`, whose attempt has not created its session; the new
   * revision, or undefined if another attempt took it over first.
   */
  async reclaim(user: string, key: string, claim: Claim, revision: number): Promise<number | undefined> {
    try {
      return await this.kv.update(keyOf(user, key), JSON.stringify(claim), revision);
    } catch (error) {
      if (isConflict(error)) return undefined;
      throw error;
    }
  }

  /**
   * Gives the key back after a create that failed, so that the client's retry can succeed: true,
   * or false if another attempt has taken the claim over since `revision` (the key is then its).
   */
  async release(user: string, key: string, revision: number): Promise<boolean> {
    try {
      await this.kv.delete(keyOf(user, key), { previousSeq: revision });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }
}

export const fingerprintOf = (request: unknown) => createHash('sha256').update(JSON.stringify(request)).digest('hex');

const keyOf = (user: string, key: string) => `key.${createHash('sha256').update(`${user}\n${key}`).digest('hex')}`;
