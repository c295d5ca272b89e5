// Users and sessions for the read benchmarks, made through the gateway: tokens any user can be
// named in (the stack runs with AUTH_JWT_SECRET), and stopped sessions with a sensor source.
import { SignJWT } from 'jose';
import type { Services } from '../../support/services.ts';

// A closed local port: the sessions made through the API analyse nothing.
const STREAM = 'rtmp://127.0.0.1:9/live/bench';

/** A day's bearer token for `user`, signed with the stack's `secret`. */
export const benchToken = (secret: string, user: string): Promise<string> =>
  new SignJWT({ product: 'bench' }).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setExpirationTime('1d')
    .sign(new TextEncoder().encode(secret));

/** A stopped session of the token's user, with one registered sensor source. */
export async function stoppedSession(services: Services, token: string): Promise<{ session: string; source: string }> {
  const created = await services.api('POST', '/v1/sessions', { token, body: { name: 'bench reads', streamUri: STREAM } });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`);
  const session: string = created.body._id;
  const source = await services.api('POST', `/v1/sessions/${session}/events`, { token, body: { name: 'bench sensor', format: 'scalar' } });
  if (source.status !== 201) throw new Error(`registering a source answered ${source.status}: ${JSON.stringify(source.body)}`);
  await services.api('POST', `/v1/sessions/${session}/stop`, { token });
  return { session, source: source.body.id };
}
