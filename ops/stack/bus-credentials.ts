// The passwords of the local servers' users (ops/stack/nats.ts): made at random the first time
// and kept in var/, so that every server the checkout starts (npm start, the tests' servers)
// and every process launched against one (service-process.ts) agree on them.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { BUS_USERS, type BusUser } from '../../bus/permissions.ts';

const FILE = resolve(import.meta.dirname, '..', '..', 'var', 'nats-users.json');

export type LocalPasswords = Record<BusUser | 'admin', string>;

export function localPasswords(): LocalPasswords {
  try {
    return JSON.parse(readFileSync(FILE, 'utf8')) as LocalPasswords;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Test lanes start servers at once: the first link wins and every one reads what it wrote.
  mkdirSync(dirname(FILE), { recursive: true });
  const draft = `${FILE}.${process.pid}`;
  writeFileSync(draft, JSON.stringify(Object.fromEntries([...BUS_USERS, 'admin'].map((user) => [user, randomBytes(18).toString('hex')]))), { mode: 0o600 });
  try {
    linkSync(draft, FILE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return JSON.parse(readFileSync(FILE, 'utf8')) as LocalPasswords;
}

/** `servers` (comma-separated NATS URLs) with `user`'s credential in each URL that has none. */
export function withCredential(servers: string, user: string, password: string): string {
  return servers
    .split(',')
    .map((server) => {
      if (!URL.canParse(server)) return server;
      const url = new URL(server);
      if (url.username) return server;
      url.username = encodeURIComponent(user);
      url.password = encodeURIComponent(password);
      return url.toString().replace(/\/$/, '');
    })
    .join(',');
}
