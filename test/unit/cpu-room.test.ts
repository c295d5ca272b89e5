// How the test runner reads whether the cores have room for one more file (ops/testing/cpu-room.ts).
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { cpuStatPath, loadBetween, machineTicks, throttledNs } from '../../ops/testing/cpu-room.ts';

test('the machine line of /proc/stat: busy is everything but idle and iowait, steal included', () => {
  const stat = 'cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 1 1 1 1 1 1 1 1 1 1\nintr 5\n';
  assert.equal(machineTicks(stat), { busy: 100 + 20 + 30 + 6 + 7 + 8, total: 100 + 20 + 30 + 6 + 7 + 8 + 400 + 50 });
  // An older kernel's line without steal.
  assert.equal(machineTicks('cpu  1 2 3 4 5 6 7\n'), { busy: 1 + 2 + 3 + 6 + 7, total: 28 });
  assert.throws(() => machineTicks('cpu0 1 2 3\n'), /no cpu line/);
});

test('time held back by a quota: nanoseconds in cgroup v1, microseconds in v2, none when unlimited', () => {
  assert.is(throttledNs('nr_periods 402\nnr_throttled 400\nthrottled_time 3479272426\nnr_bursts 0\n'), 3479272426);
  assert.is(throttledNs('usage_usec 10\nnr_periods 5\nnr_throttled 2\nthrottled_usec 1500\n'), 1_500_000);
  assert.is(throttledNs('usage_usec 10\nuser_usec 5\n'), 0);
});

test("the group's cpu.stat: the v1 cpu controller's when there is one, else the unified hierarchy's", () => {
  const hybrid = '4:memory:/a/b\n2:cpuacct:/\n1:cpu:/emo-slower-machine-7\n0::/\n';
  assert.is(cpuStatPath(hybrid), '/sys/fs/cgroup/cpu/emo-slower-machine-7/cpu.stat');
  assert.is(cpuStatPath('3:cpu,cpuacct:/\n0::/\n'), '/sys/fs/cgroup/cpu,cpuacct/cpu.stat');
  assert.is(cpuStatPath('0::/system.slice/ci.service\n'), '/sys/fs/cgroup/system.slice/ci.service/cpu.stat');
  assert.is(cpuStatPath('5:memory:/x\n'), undefined);
});

test('load between two samples: shares of the ticks and of the wall time', () => {
  const older = { at: 1000, busy: 100, total: 400, throttled: 0 };
  const newer = { at: 3000, busy: 280, total: 800, throttled: 500_000_000 };
  assert.equal(loadBetween(older, newer), { busy: 180 / 400, throttled: 0.25 });
  // No time between them: no load known.
  assert.equal(loadBetween(older, older), { busy: 0, throttled: 0 });
});

test("this machine's own files read as the runner reads them", () => {
  const { busy, total } = machineTicks(readFileSync('/proc/stat', 'utf8'));
  assert.ok(busy > 0 && total > busy, `busy ${busy} of ${total}`);
  const path = cpuStatPath(readFileSync('/proc/self/cgroup', 'utf8'));
  assert.ok(path && existsSync(path), `cpu.stat at ${path}`);
  assert.ok(throttledNs(readFileSync(path!, 'utf8')) >= 0);
});

test.run();
