// A network partition on loopback: packets to the given TCP ports are dropped (iptables), and so
// is every packet the servers in the given cgroups send (ops/stack/cgroups.ts): their answers,
// and their own connections to anything else (ZooKeeper, the other servers). The servers run on
// but neither reach nor can be reached: connections hang rather than being refused, as with a
// machine cut off by the network. The rules are removed by heal() and, should
// the test end first, when the process exits; a process killed outright runs no exit handler,
// so the rules also carry the tag the test runner gives the file (TEST_RULE_TAG), by which the
// runner removes them once the file has ended (ops/testing/network-rules.ts).
import { execFileSync } from 'node:child_process';
import { ruleTag } from '../../ops/testing/network-rules.ts';

export interface Partition {
  heal(): void;
}

/** `cgroups`: the servers' groups, by their path below the cgroup2 root. */
export function cutOff(ports: number[], cgroups: string[]): Partition {
  const tag = process.env.TEST_RULE_TAG ?? ruleTag(process.pid, 'run-alone');
  const comment = ['-m', 'comment', '--comment', tag, '-j', 'DROP'];
  const rules = [
    ['INPUT', '-i', 'lo', '-p', 'tcp', '-m', 'multiport', '--dports', ports.join(','), ...comment],
    ...cgroups.map((path) => ['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', path, ...comment]),
  ];
  for (const rule of rules) execFileSync('iptables', ['-I', ...rule]);
  let healed = false;
  const heal = () => {
    if (healed) return;
    healed = true;
    process.off('exit', heal);
    for (const rule of rules) execFileSync('iptables', ['-D', ...rule]);
  };
  process.on('exit', heal);
  return { heal };
}
