// The newest sessions of each user, in memory, fed by the watch on the sessions bucket (the
// truth about every session): the first pages of a list, which every client asks for, need no
// ClickHouse. Per user it keeps the newest `perUser` sessions; below the newest one it dropped
// (its horizon) it knows nothing, so a page that reaches past the horizon is not its to answer.
// A user's sessions are answered for once they have also been seeded from the sessions table,
// which may hold rows the bucket never had (loaded straight into ClickHouse): the union of the
// newest of each is exact above the higher of their horizons. Active sessions are kept below
// the horizon too (a user has few), so that a list of them is answered whole.
//
// All users together keep at most `total` sessions: past it, the users listed least lately are
// forgotten whole. A user forgotten is answered by ClickHouse until seeded again; the sessions
// table then holds every session the bucket had when it was forgotten (its seed waits for the
// index to catch up), and the watch adds every change since.
import type { SessionRecord } from '../../bus/contracts/session.ts';
import { publicRecord, type PublicRecord } from '../../bus/session-view.ts';
import type { SessionListFilter } from './sessions-index.ts';

interface Entry {
  id: string;
  createdAt: number;
  state: SessionRecord['state'];
  type: SessionRecord['type'];
  /** The public record as JSON: a third of the parsed object's size, parsed only when listed. */
  doc: string;
}

interface UserSessions {
  /** Newest first: created desc, id desc, as the list orders them. */
  entries: Entry[];
  /** The newest session dropped: every session newer than it is in `entries`. */
  horizon?: Entry;
  /** Whether the newest sessions of the sessions table are in `entries` too. */
  seeded: boolean;
  /** The active sessions listed after the horizon, by id. */
  actives: Map<string, Entry>;
  /** Since when the sessions table's active sessions are in `entries` or `actives` too. */
  activesSince?: number;
}

/** A session list's order: negative when `a` is listed before `b`. */
const listOrder = (a: Entry, b: Entry) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export class NewestSessions {
  /** Least lately listed first: the first to be forgotten. */
  private readonly users = new Map<string, UserSessions>();
  /** The user of each session kept: a deletion names the session alone. */
  private readonly userOf = new Map<string, string>();
  /** The bucket revision of the last change applied. */
  revision = 0;

  constructor(
    private readonly perUser: number,
    private readonly total: number = Infinity,
  ) {}

  /** Sessions kept, of all users. */
  get size(): number {
    return this.userOf.size;
  }

  /** The watch starts over, replaying every session: what was learnt before is dropped. */
  restarted(): void {
    this.users.clear();
    this.userOf.clear();
    this.revision = 0;
  }

  put(record: SessionRecord, revision: number): void {
    this.revision = revision;
    this.insert(record.user, entryOf(publicRecord(record)), true);
    this.keepWithinTotal();
  }

  /**
   * What memory holds of the user now, the user counted as listed: a seed read after it is
   * taken only if the user was not forgotten since (what memory knew may be in neither).
   */
  mark(name: string): object {
    return this.listed(name);
  }

  forgottenSince(name: string, mark: object): boolean {
    return this.users.get(name) !== mark;
  }

  /** Whether the user's newest sessions in the sessions table have been added. */
  seeded(user: string): boolean {
    return this.users.get(user)?.seeded ?? false;
  }

  /**
   * Adds the user's newest sessions as the sessions table lists them (`complete`: all of them);
   * the bucket's copy of a session, as new or newer, is kept.
   */
  seed(name: string, listed: PublicRecord[], complete: boolean): void {
    for (const record of listed) this.insert(name, entryOf(record), false);
    const user = this.listed(name);
    const oldest = listed.at(-1);
    if (!complete && oldest) {
      const entry = entryOf(oldest);
      if (!user.horizon || listOrder(entry, user.horizon) < 0) this.dropFrom(user, entry);
    }
    user.seeded = true;
    this.keepWithinTotal();
  }

  /** Adds the user's active sessions created since `sinceMs` as the sessions table lists them. */
  seedActives(name: string, listed: PublicRecord[], sinceMs: number): void {
    for (const record of listed) this.insert(name, entryOf(record), false);
    this.user(name).activesSince = sinceMs;
    this.keepWithinTotal();
  }

  deleted(id: string, revision: number): void {
    this.revision = revision;
    const name = this.userOf.get(id);
    if (name === undefined) return;
    this.userOf.delete(id);
    const user = this.users.get(name)!;
    user.entries = user.entries.filter((entry) => entry.id !== id);
    user.actives.delete(id);
  }

  /**
   * The page as the sessions table would answer it, or nothing when it reaches past what is
   * kept or the user is not seeded yet.
   */
  page(filter: SessionListFilter): { records: PublicRecord[]; hasMore: boolean } | undefined {
    if (!this.users.get(filter.user)?.seeded) return undefined;
    const user = this.listed(filter.user);
    const wanted = filter.offset + filter.limit + 1;
    const matching: Entry[] = [];
    for (const entry of user.entries) {
      if (!matches(entry, filter)) continue;
      matching.push(entry);
      if (matching.length === wanted) break;
    }
    const activesKnown = filter.state === 'active' && user.activesSince !== undefined && filter.activeSinceMs >= user.activesSince;
    if (matching.length < wanted && activesKnown) {
      matching.push(...[...user.actives.values()].filter((entry) => matches(entry, filter)).sort(listOrder));
      matching.splice(wanted);
    } else if (matching.length < wanted && user.horizon) return undefined;
    return {
      records: matching.slice(filter.offset, filter.offset + filter.limit).map((entry) => JSON.parse(entry.doc) as PublicRecord),
      hasMore: matching.length === wanted,
    };
  }

  /** The user, now the last to be forgotten. */
  private listed(name: string): UserSessions {
    const user = this.user(name);
    this.users.delete(name);
    this.users.set(name, user);
    return user;
  }

  /** Forgets the users listed least lately until the sessions kept are within `total`. */
  private keepWithinTotal(): void {
    for (const [name, user] of this.users) {
      if (this.userOf.size <= this.total) return;
      this.users.delete(name);
      for (const entry of user.entries) this.userOf.delete(entry.id);
      for (const id of user.actives.keys()) this.userOf.delete(id);
    }
  }

  private user(name: string): UserSessions {
    let user = this.users.get(name);
    if (!user) this.users.set(name, (user = { entries: [], seeded: false, actives: new Map() }));
    return user;
  }

  /** `replace`: a session already kept takes the new copy. */
  private insert(name: string, entry: Entry, replace: boolean): void {
    const user = this.user(name);
    if (user.horizon && listOrder(entry, user.horizon) >= 0) {
      if (!replace && user.actives.has(entry.id)) return;
      if (entry.state === 'active') {
        user.actives.set(entry.id, entry);
        this.userOf.set(entry.id, name);
      } else if (user.actives.delete(entry.id)) {
        this.userOf.delete(entry.id);
      }
      return;
    }
    const at = this.indexOf(user.entries, entry);
    if (user.entries[at]?.id === entry.id) {
      if (replace) user.entries[at] = entry;
      return;
    }
    user.entries.splice(at, 0, entry);
    this.userOf.set(entry.id, name);
    if (user.entries.length > this.perUser) this.dropFrom(user, user.entries.at(-1)!);
  }

  /** Forgets `horizon` and every session listed after it but the active ones. */
  private dropFrom(user: UserSessions, horizon: Entry): void {
    user.horizon = horizon;
    while (user.entries.length > 0 && listOrder(user.entries.at(-1)!, horizon) >= 0) {
      const dropped = user.entries.pop()!;
      if (dropped.state === 'active') user.actives.set(dropped.id, dropped);
      else this.userOf.delete(dropped.id);
    }
  }

  /** Where `entry` is or belongs in the list: binary search on the list's order. */
  private indexOf(entries: Entry[], entry: Entry): number {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (listOrder(entries[mid]!, entry) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const entryOf = (record: PublicRecord): Entry => ({
  id: record.id,
  createdAt: record.createdAt,
  state: record.state,
  type: record.type,
  doc: JSON.stringify(record),
});

/** The sessions table's filters (storage/sessions/sessions-index.ts): created in [from, to), state, type. */
function matches(entry: Entry, filter: SessionListFilter): boolean {
  return (
    (filter.type === undefined || entry.type === filter.type) &&
    (filter.state === undefined || entry.state === filter.state) &&
    (filter.state !== 'active' || entry.createdAt >= filter.activeSinceMs) &&
    (filter.fromMs === undefined || entry.createdAt >= filter.fromMs) &&
    (filter.toMs === undefined || entry.createdAt < filter.toMs)
  );
}
