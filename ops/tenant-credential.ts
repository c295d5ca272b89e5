// The NATS user an operator adds for one tenant's live results: every row and worker state of
// one product, or of one user of it, and nothing else (bus/permissions.ts tenantPermissions).
// Prints the entry for the `users` of the ANALYTICS account of ops/production/nats-analytics.conf
// (docs/operations.md, "Live results for one tenant").
//
//   node --import tsx ops/tenant-credential.ts <product> [<user>] [<nats user name>]
import { tenantPermissions } from '../bus/permissions.ts';
import { subjectToken, tenantOf } from '../bus/subjects.ts';
import { natsUserEntry } from './stack/nats-users.ts';

const [product, user, name] = process.argv.slice(2);
if (!product) {
  console.error('usage: node --import tsx ops/tenant-credential.ts <product> [<user>] [<nats user name>]');
  process.exit(2);
}
const tenant = user === undefined || user === '' ? subjectToken(product) : tenantOf({ product, user });
const login = name ?? `tenant-${tenant.replaceAll('.', '-').replaceAll('~', '')}`;
const password = `$NATS_${login.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PASSWORD`;
const { subscribe } = tenantPermissions(tenant);
console.log(`# ${user ? `user ${JSON.stringify(user)} of ` : ''}product ${JSON.stringify(product)}: ${subscribe.join(', ')}`);
console.log(natsUserEntry({ user: login, password, permissions: tenantPermissions(tenant) }, '      '));
