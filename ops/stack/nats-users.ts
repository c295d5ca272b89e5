// The users of a NATS server in its configuration's syntax: one per kind of process, with the
// permissions bus/permissions.ts gives it. The local servers (nats.ts) and production's
// configuration (ops/production/nats-analytics.conf) are written with it.
import type { Permissions } from '../../bus/permissions.ts';

export interface NatsUser {
  user: string;
  /** A value as the configuration takes it: a quoted password, or a $VARIABLE production fills in. */
  password: string;
  /** None: every right of the account. */
  permissions?: Permissions;
}

const list = (subjects: string[], indent: string) => `[\n${subjects.map((subject) => `${indent}  ${JSON.stringify(subject)}`).join('\n')}\n${indent}]`;

/** One user, as an entry of a `users: [...]` list, each of its lines starting with `indent`. */
export function natsUserEntry({ user, password, permissions }: NatsUser, indent: string): string {
  const lines = [`${indent}{`, `${indent}  user: ${user}`, `${indent}  password: ${password}`];
  if (permissions) {
    const inner = `${indent}    `;
    lines.push(
      `${indent}  permissions: {`,
      // An empty allow list would allow everything: nothing to publish is a denial of all.
      permissions.publish.length ? `${inner}publish: { allow: ${list(permissions.publish, inner)} }` : `${inner}publish: { deny: [">"] }`,
      `${inner}subscribe: { allow: ${list(permissions.subscribe, inner)} }`,
      ...(permissions.answers ? [`${inner}allow_responses: true`] : []),
      `${indent}  }`,
    );
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}
