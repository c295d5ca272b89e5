// The users of the service's account in production's NATS configuration (nats-analytics.conf,
// between its markers): one per kind of process with bus/permissions.ts's rights, and `admin`
// for the operator's tools. After a change of the permissions, run
//
//   node --import tsx ops/production/nats-users.ts
//
// to write them into the file; test/unit/bus-permissions.test.ts fails until they agree.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BUS_USERS, permissions } from '../../bus/permissions.ts';
import { natsUserEntry } from '../stack/nats-users.ts';

export const PRODUCTION_CONF = fileURLToPath(new URL('nats-analytics.conf', import.meta.url));
const BEGIN = '# Written by ops/production/nats-users.ts from bus/permissions.ts: do not edit by hand.';
const END = '# End of the written users.';

/** `conf` with the users between its markers written from the permissions. */
export function withServiceUsers(conf: string): string {
  const begin = conf.indexOf(BEGIN);
  const end = conf.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the configuration has no "${BEGIN}" ... "${END}" block`);
  const indent = conf.slice(conf.lastIndexOf('\n', begin) + 1, begin);
  const users = [
    ...BUS_USERS.map((user) => natsUserEntry({ user, password: `$NATS_${user.toUpperCase()}_PASSWORD`, permissions: permissions(user) }, indent)),
    natsUserEntry({ user: 'admin', password: '$NATS_ADMIN_PASSWORD' }, indent),
  ];
  return `${conf.slice(0, begin)}${[BEGIN, ...users, `${indent}${END}`].join('\n')}${conf.slice(end + END.length)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PRODUCTION_CONF, withServiceUsers(readFileSync(PRODUCTION_CONF, 'utf8')));
  console.log(`written: ${PRODUCTION_CONF}`);
}
