// Who is calling: tokens-file entries, HS256 JWTs with `sub` and `product`, and nothing else.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { readConfig } from '../../bus/config.ts';
import { Authenticator, bearerToken } from '../../gateway/auth/authenticator.ts';
import { VerifiedTokens } from '../../gateway/auth/verified-tokens.ts';

const config = readConfig();

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const dir = join(config.varDir, 'test', 'unit', `gateway-auth-${process.pid}`);
mkdirSync(dir, { recursive: true });
test.after(() => rmSync(dir, { recursive: true, force: true }));

function tokensFile(content: unknown): string {
  const file = join(dir, `${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const key = (secret: string) => new TextEncoder().encode(secret);

/** Expires in an hour unless told otherwise; `expires: null` leaves `exp` out. */
function jwt(claims: Record<string, unknown>, options: { secret?: string; alg?: string; expires?: number | string | null } = {}) {
  const builder = new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? 'HS256' }).setIssuedAt();
  if (options.expires !== null) builder.setExpirationTime(options.expires ?? '1h');
  return builder.sign(key(options.secret ?? SECRET));
}

const jwtOnly = () => new Authenticator({ jwtSecret: SECRET });

test('a tokens-file entry stands for its user and product', async () => {
  const auth = new Authenticator({ tokensFile: tokensFile([
    { token: 'tok-1', user: 'ann', product: 'p1' },
    { token: 'tok-2', user: 'ben', product: 'p2' },
  ]) });
  assert.equal((await auth.authenticate('tok-1'))?.caller, { user: 'ann', product: 'p1' });
  assert.equal((await auth.authenticate('tok-2'))?.caller, { user: 'ben', product: 'p2' });
  assert.is(await auth.authenticate('tok-3'), undefined);
  assert.is(await auth.authenticate('TOK-1'), undefined);
  assert.is(await auth.authenticate(''), undefined);
});

test('a malformed tokens file stops the gateway at start', () => {
  assert.throws(() => new Authenticator({ tokensFile: tokensFile('not json') }));
  assert.throws(() => new Authenticator({ tokensFile: tokensFile({ token: 't', user: 'u', product: 'p' }) }), /JSON array/);
  assert.throws(() => new Authenticator({ tokensFile: tokensFile([{ token: 't', user: '', product: 'p' }]) }), /non-empty/);
  assert.throws(() => new Authenticator({ tokensFile: tokensFile([{ token: 't', user: 'u' }]) }), /non-empty/);
});

test('with neither a tokens file nor a JWT secret there is no way in', () => {
  assert.throws(() => new Authenticator({}), /AUTH_TOKENS_FILE|AUTH_JWT_SECRET/);
});

test('an HS256 JWT: sub is the user, product the product', async () => {
  const token = await jwt({ sub: 'carol', product: 'insights' }, { expires: '1h' });
  assert.equal((await jwtOnly().authenticate(token))?.caller, { user: 'carol', product: 'insights' });
});

test('a JWT without product gets the default product; without sub it is refused', async () => {
  assert.equal((await jwtOnly().authenticate(await jwt({ sub: 'dan' })))?.caller, { user: 'dan', product: 'default' });
  assert.is(await jwtOnly().authenticate(await jwt({ product: 'x' })), undefined);
  assert.is(await jwtOnly().authenticate(await jwt({ sub: '' })), undefined);
  assert.is(await jwtOnly().authenticate(await jwt({ sub: 42 })), undefined);
});

test('a JWT signed with another secret is refused', async () => {
  assert.is(await jwtOnly().authenticate(await jwt({ sub: 'eve' }, { secret: 'another-secret-of-at-least-32-bytes!' })), undefined);
});

test('an expired JWT is refused', async () => {
  const expired = await jwt({ sub: 'fay' }, { expires: Math.floor(Date.now() / 1000) - 120 });
  assert.is(await jwtOnly().authenticate(expired), undefined);
});

test('a JWT without exp is refused; a valid one says when it expires, a tokens-file entry never does', async () => {
  assert.is(await jwtOnly().authenticate(await jwt({ sub: 'kim' }, { expires: null })), undefined);
  const exp = Math.floor(Date.now() / 1000) + 600;
  assert.equal(await jwtOnly().authenticate(await jwt({ sub: 'kim', product: 'p' }, { expires: exp })), { caller: { user: 'kim', product: 'p' }, expiresAt: exp * 1000 });
  const auth = new Authenticator({ tokensFile: tokensFile([{ token: 'tok', user: 'lee', product: 'p' }]) });
  assert.equal(await auth.authenticate('tok'), { caller: { user: 'lee', product: 'p' } });
});

test('with JWT_AUDIENCE and JWT_ISSUER configured, a JWT must name both; without, neither is looked at', async () => {
  const strict = new Authenticator({ jwtSecret: SECRET, jwtAudience: 'emotion-stream', jwtIssuer: 'https://id.example' });
  const signed = (claims: Record<string, unknown>) => jwt({ sub: 'max', ...claims });
  assert.equal((await strict.authenticate(await signed({ aud: 'emotion-stream', iss: 'https://id.example' })))?.caller, { user: 'max', product: 'default' });
  assert.equal((await strict.authenticate(await signed({ aud: ['other', 'emotion-stream'], iss: 'https://id.example' })))?.caller, { user: 'max', product: 'default' });
  for (const claims of [{}, { aud: 'emotion-stream' }, { iss: 'https://id.example' }, { aud: 'other', iss: 'https://id.example' }, { aud: 'emotion-stream', iss: 'https://evil.example' }]) {
    assert.is(await strict.authenticate(await signed(claims)), undefined, JSON.stringify(claims));
  }
  assert.equal((await jwtOnly().authenticate(await signed({ aud: 'anything', iss: 'anyone' })))?.caller, { user: 'max', product: 'default' });
});

test('a JWT with alg none, or any algorithm but HS256, is refused', async () => {
  const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'mallory', product: 'p' })}.`;
  assert.is(await jwtOnly().authenticate(unsigned), undefined);
  const hs512 = await jwt({ sub: 'mallory' }, { alg: 'HS512' });
  assert.is(await jwtOnly().authenticate(hs512), undefined);
  // A valid HS256 signature with the header swapped to another algorithm.
  const [, payload, signature] = (await jwt({ sub: 'mallory' })).split('.');
  assert.is(await jwtOnly().authenticate(`${b64({ alg: 'HS384' })}.${payload}.${signature}`), undefined);
});

test('a tampered JWT payload is refused', async () => {
  const [header, , signature] = (await jwt({ sub: 'gus', product: 'p' })).split('.');
  assert.is(await jwtOnly().authenticate(`${header}.${b64({ sub: 'admin', product: 'p' })}.${signature}`), undefined);
});

test('a JWT is refused when only a tokens file is configured', async () => {
  const auth = new Authenticator({ tokensFile: tokensFile([{ token: 'tok', user: 'u', product: 'p' }]) });
  assert.is(await auth.authenticate(await jwt({ sub: 'hal' })), undefined);
});

test('both configured: both kinds of token work', async () => {
  const auth = new Authenticator({ tokensFile: tokensFile([{ token: 'tok', user: 'ivy', product: 'p' }]), jwtSecret: SECRET });
  assert.equal((await auth.authenticate('tok'))?.caller, { user: 'ivy', product: 'p' });
  assert.equal((await auth.authenticate(await jwt({ sub: 'jon', product: 'q' })))?.caller, { user: 'jon', product: 'q' });
});

test('a JWT verified once is refused from the second its exp has passed, as verification refuses it', async () => {
  let now = Date.now();
  const auth = new Authenticator({ jwtSecret: SECRET, now: () => now });
  const exp = Math.floor(now / 1000) + 60;
  const token = await jwt({ sub: 'nia' }, { expires: exp });
  assert.equal((await auth.authenticate(token))?.caller, { user: 'nia', product: 'default' });
  now = exp * 1000 - 1;
  assert.equal((await auth.authenticate(token))?.caller, { user: 'nia', product: 'default' });
  now = exp * 1000;
  assert.is(await auth.authenticate(token), undefined);
  assert.is(await new Authenticator({ jwtSecret: SECRET, now: () => now }).authenticate(token), undefined);
});

test('a kept JWT lets in only itself: another audience, a changed signature or another secret still fail', async () => {
  const strict = new Authenticator({ jwtSecret: SECRET, jwtAudience: 'emotion-stream' });
  const ours = await jwt({ sub: 'oli', aud: 'emotion-stream' });
  const theirs = await jwt({ sub: 'oli', aud: 'other-service' });
  assert.ok(await strict.authenticate(ours));
  assert.is(await strict.authenticate(theirs), undefined);
  const [header, payload, signature] = ours.split('.');
  const flipped = `${signature!.slice(0, 10)}${signature![10] === 'A' ? 'B' : 'A'}${signature!.slice(11)}`;
  assert.is(await strict.authenticate(`${header}.${payload}.${flipped}`), undefined);
  // The same token after a restart with the audience no longer accepted.
  assert.is(await new Authenticator({ jwtSecret: SECRET, jwtAudience: 'renamed' }).authenticate(ours), undefined);
  assert.is(await new Authenticator({ jwtSecret: 'another-secret-of-at-least-32-bytes!' }).authenticate(ours), undefined);
});

test('verified tokens are kept up to their bound, the oldest dropped first', () => {
  const kept = new VerifiedTokens(2);
  const verified = { caller: { user: 'pat', product: 'p' }, expiresAt: Date.now() + 60_000 };
  for (const token of ['a', 'b', 'c']) kept.add(token, verified);
  assert.is(kept.size, 2);
  assert.is(kept.get('a', Date.now()), undefined);
  assert.equal(kept.get('c', Date.now()), verified);
});

test('a kept token with nbf is refused before it, as verification refuses it', () => {
  const kept = new VerifiedTokens(2);
  const nowMs = Date.now();
  kept.add('t', { caller: { user: 'quin', product: 'p' }, expiresAt: nowMs + 60_000, notBefore: Math.floor(nowMs / 1000) + 5 });
  assert.is(kept.get('t', nowMs), undefined);
});

test('bearerToken reads Authorization: Bearer <token> only', () => {
  assert.is(bearerToken('Bearer abc.def'), 'abc.def');
  assert.is(bearerToken('bearer abc'), 'abc');
  assert.is(bearerToken('Bearer   abc  '), 'abc');
  assert.is(bearerToken('Bearer'), undefined);
  assert.is(bearerToken('Bearer a b'), undefined);
  assert.is(bearerToken('Basic YTpi'), undefined);
  assert.is(bearerToken('abc'), undefined);
  assert.is(bearerToken(undefined), undefined);
});

test.run();
