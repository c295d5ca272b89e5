// A network partition on loopback: packets to the given TCP ports are dropped (iptables), so the
// servers behind them run on but cannot be reached: connections to them hang rather than being
// refused, as with a machine cut off by the network. The rules name this process, and are removed
// by heal() and, should the test end first, when the process exits.
import { execFileSync } from 'node:child_process';

export interface Partition {
  heal(): void;
}

export function cutOff(ports: number[]): Partition {
  const rule = ['INPUT', '-i', 'lo', '-p', 'tcp', '-m', 'multiport', '--dports', ports.join(','),
    '-m', 'comment', '--comment', `emo-test-partition-${process.pid}`, '-j', 'DROP'];
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
