// The iptables rules tests add (test/support/partition.ts) carry a comment naming who answers
// for them: `emo-test:<pid>:<file>`, the pid of the test run (or of the test file run on its
// own). A file's own exit handler removes them, but a file killed at its time limit never runs
// it: the runner removes a file's rules when the file ends however it ended, and at the start of
// a run those whose owner is gone, so a DROP on a loopback port never outlives its test to catch
// a later file handed that port. Rules of runs still going, side by side, are left alone.
import { execFileSync } from 'node:child_process';
import { processAlive } from '../../bus/process-alive.ts';

const PREFIX = 'emo-test:';

/** The comment a test file's rules carry. */
export const ruleTag = (ownerPid: number, file: string) => `${PREFIX}${ownerPid}:${file}`;

/** The tagged rules as `iptables -S` prints them, with their comment. */
export function taggedRules(): { spec: string; tag: string }[] {
  let listing: string;
  try {
    listing = execFileSync('iptables', ['-S'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    // Without iptables no test can have added a rule.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return listing.split('\n').flatMap((spec) => {
    const tag = /--comment "?(emo-test:[^" ]+)/.exec(spec)?.[1];
    return tag && spec.startsWith('-A ') ? [{ spec, tag }] : [];
  });
}

/** Removes the tagged rules whose tag `matches`; returns how many. */
export function removeRules(matches: (tag: string) => boolean): number {
  const doomed = taggedRules().filter((rule) => matches(rule.tag));
  for (const { spec } of doomed) {
    // `-S` prints a rule as the `-A` that adds it; the same words after `-D` delete it.
    const words = [...spec.matchAll(/"([^"]*)"|(\S+)/g)].map(([, quoted, word]) => quoted ?? word!);
    try {
      execFileSync('iptables', ['-D', ...words.slice(1)], { stdio: 'ignore' });
    } catch {
      // removed meanwhile by its own test
    }
  }
  return doomed.length;
}

/** Removes the rules of the file `tag` names. */
export const removeFileRules = (tag: string) => removeRules((found) => found === tag);

/** Removes the rules whose owner process is gone: a run that was killed before its cleanup. */
export const removeOrphanRules = () => removeRules((tag) => !processAlive(Number(tag.slice(PREFIX.length).split(':')[0])));

