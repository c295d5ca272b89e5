// The processes a test file started, found through parent links in /proc. The servers and
// services a test starts run in process groups of their own (ops/stack/process.ts), so a group
// signal to the file's process misses them; a file stopped for running too long must not leave
// them behind to load the files that run after it.
import { readdirSync, readFileSync } from 'node:fs';

/** The parent of `pid`, or undefined once it is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    // The command name (second field) may hold spaces and parentheses: read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** `root` and every process below it, at this moment. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const parent = parentOf(pid);
    if (parent === undefined) continue;
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/** Kills `root` and everything below it. The tree is read first: an orphan's parent link is lost. */
export function killTree(root: number): void {
  for (const pid of processTree(root)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
