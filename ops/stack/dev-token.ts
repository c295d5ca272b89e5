// The bearer token of a local service: made once, kept with its data, so a restart keeps the
// same token.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** The first token of the tokens file, which is created when missing. */
export function developmentToken(file: string): string {
  if (!existsSync(file)) {
    const token = randomBytes(24).toString('base64url');
    writeFileSync(file, JSON.stringify([{ token, user: 'developer', product: 'local' }], null, 2), { mode: 0o600 });
  }
  const entries = JSON.parse(readFileSync(file, 'utf8')) as { token: string }[];
  return entries[0]?.token ?? '';
}
