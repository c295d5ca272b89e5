// A network partition on loopback: packets to the given TCP ports are dropped (iptables), so the
// servers behind them run on but cannot be reached: connections to them hang rather than being
// refused, as with a machine cut off by the network. The rules are removed by heal() and, should
// the test end first, when the process exits; a process killed outright runs no exit handler,
// so the rules also carry the tag the test runner gives the file (TEST_RULE_TAG), by which the
// runner removes them once the file has ended (ops/testing/network-rules.ts).
import { execFileSync } from 'node:child_process';
import { ruleTag } from '../../ops/testing/network-rules.ts';

export interface Partition {
  heal(): void;
}

export function cutOff(ports: number[]): Partition {
  const tag = process.env.TEST_RULE_TAG ?? ruleTag(process.pid, 'run-alone');
  const rule = ['INPUT', '-i', 'lo', '-p', 'tcp', '-m', 'multiport', '--dports', ports.join(','),
    '-m', 'comment', '--comment', tag, '-j', 'DROP'];
  execFileSync('iptables', ['-I', ...rule]);
  let healed = false;
  const heal = () => {
    if (healed) return;
    healed = true;
    process.off('exit', heal);
    execFileSync('iptables', ['-D', ...rule]);
  };
  process.on('exit', heal);
  return { heal };
}
