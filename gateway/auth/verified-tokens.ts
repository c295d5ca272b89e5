// JWTs this gateway has verified lately, kept until they expire. A client sends the same token
// with every request, and checking its HS256 signature each time is most of what
// authentication costs. Only the very token that passed verification is kept (the whole
// string, signature included), and each use checks its `exp` and `nbf` as verification does
// (jose: whole seconds, no tolerance), so a token the cache answers for is one verification
// would accept at that moment. The secret, audience and issuer it was verified against belong
// to the authenticator that owns the cache and never change while it lives.
import type { Caller } from '../../bus/contracts/session.ts';

export interface VerifiedToken {
  caller: Caller;
  /** Unix ms, the token's `exp`. */
  expiresAt: number;
  /** Unix seconds, the token's `nbf`, when it has one. */
  notBefore?: number;
}

export class VerifiedTokens {
  /** Oldest first. */
  private readonly kept = new Map<string, VerifiedToken>();

  constructor(private readonly limit: number) {}

  /** The token's identity if it was verified and is still within its validity at `nowMs`. */
  get(token: string, nowMs: number): VerifiedToken | undefined {
    const verified = this.kept.get(token);
    if (!verified) return undefined;
    const now = Math.floor(nowMs / 1000);
    if (verified.expiresAt / 1000 <= now || (verified.notBefore !== undefined && verified.notBefore > now)) {
      this.kept.delete(token);
      return undefined;
    }
    return verified;
  }

  add(token: string, verified: VerifiedToken): void {
    this.kept.delete(token);
    if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(token, verified);
  }

  get size(): number {
    return this.kept.size;
  }
}
