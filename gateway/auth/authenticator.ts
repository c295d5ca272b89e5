// Who is calling. A bearer token is either an entry of the tokens file (opaque tokens, handy
// for services and development) or an HS256 JWT whose `sub` is the user and whose `product`
// claim names the product. Both can be configured at once. A JWT must say when it expires (a
// leaked one must not work for ever), and names the audience and issuer when they are
// configured (a token minted for another service with the same secret must not work here).
import { readFileSync } from 'node:fs';
import { jwtVerify } from 'jose';
import type { Caller } from '../../bus/contracts/session.ts';
import { VerifiedTokens } from './verified-tokens.ts';

interface TokenEntry {
  token: string;
  user: string;
  product: string;
}

/** A valid token's caller, and when the token stops being valid (never, for a tokens-file entry). */
export interface Identity {
  caller: Caller;
  /** Unix ms. */
  expiresAt?: number;
}

export interface AuthenticatorOptions {
  tokensFile?: string;
  jwtSecret?: string;
  jwtAudience?: string;
  jwtIssuer?: string;
  /** The clock tokens are checked against; the system's unless a test sets it. */
  now?: () => number;
}

// About 10,000 clients' tokens of a few hundred bytes each: a few megabytes at most.
const VERIFIED_TOKENS_KEPT = 10_000;

export class Authenticator {
  private readonly tokens = new Map<string, Caller>();
  private readonly jwtKey?: Uint8Array;
  private readonly jwtClaims: { audience?: string; issuer?: string };
  private readonly verified = new VerifiedTokens(VERIFIED_TOKENS_KEPT);
  private readonly now: () => number;

  constructor(options: AuthenticatorOptions) {
    this.now = options.now ?? Date.now;
    this.jwtClaims = {
      ...(options.jwtAudience ? { audience: options.jwtAudience } : {}),
      ...(options.jwtIssuer ? { issuer: options.jwtIssuer } : {}),
    };
    if (options.tokensFile) {
      for (const entry of readTokens(options.tokensFile)) {
        this.tokens.set(entry.token, { user: entry.user, product: entry.product });
      }
    }
    if (options.jwtSecret) this.jwtKey = new TextEncoder().encode(options.jwtSecret);
    if (!this.tokens.size && !this.jwtKey) {
      throw new Error('no way to authenticate: set AUTH_TOKENS_FILE or AUTH_JWT_SECRET');
    }
  }

  /** Who a token stands for, or undefined when it is not valid. */
  async authenticate(token: string): Promise<Identity | undefined> {
    const known = this.tokens.get(token);
    if (known) return { caller: known };
    if (!this.jwtKey || token.split('.').length !== 3) return undefined;
    const now = this.now();
    const seen = this.verified.get(token, now);
    if (seen) return { caller: seen.caller, expiresAt: seen.expiresAt };
    try {
      const { payload } = await jwtVerify(token, this.jwtKey, {
        algorithms: ['HS256'],
        requiredClaims: ['exp'],
        currentDate: new Date(now),
        ...this.jwtClaims,
      });
      if (typeof payload.sub !== 'string' || !payload.sub) return undefined;
      const product = typeof payload.product === 'string' && payload.product ? payload.product : 'default';
      const identity = { caller: { user: payload.sub, product }, expiresAt: (payload.exp as number) * 1000 };
      this.verified.add(token, { ...identity, ...(payload.nbf !== undefined ? { notBefore: payload.nbf } : {}) });
      return identity;
    } catch {
      return undefined;
    }
  }
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function readTokens(file: string): TokenEntry[] {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const valid = (e: unknown): e is TokenEntry =>
    typeof e === 'object' && e !== null &&
    ['token', 'user', 'product'].every((k) => typeof (e as Record<string, unknown>)[k] === 'string' && (e as Record<string, string>)[k] !== '');
  if (!Array.isArray(parsed) || !parsed.every(valid)) {
    throw new Error(`${file} must be a JSON array of {"token", "user", "product"} with non-empty strings`);
  }
  return parsed;
}
