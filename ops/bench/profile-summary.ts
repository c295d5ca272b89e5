// Where a process spent its CPU, from a V8 CPU profile (node --cpu-prof; the capacity
// benchmark's --profile writes one per process): self time by function and by source area.
//   node --import tsx ops/bench/profile-summary.ts <file.cpuprofile> [--top 15]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fixed, printTable } from './lib/stats.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// Source areas, first match wins: where in the project, or which library, the time went.
const AREAS: [string, RegExp][] = [
  ['idle', /^\(idle\)$/],
  ['garbage collection', /^\(garbage collector\)$/],
  ['onnxruntime (inference)', /onnxruntime/],
  ['face analysis', /actors\/face\//],
  ['voice analysis', /actors\/voice\//],
  ['ingest (pipes, frames)', /actors\/ingest\//],
  ['models (batching)', /actors\/models\//],
  ['NATS client', /@nats-io/],
  ['other project code', /\/(actors|bus|storage|gateway)\//],
  ['Node internals', /^node:|^internal\//],
  ['other libraries', /node_modules/],
  ['native / program', /.*/],
];

function area(node: ProfileNode): string {
  const { functionName, url } = node.callFrame;
  const key = url || functionName;
  return AREAS.find(([, pattern]) => pattern.test(key) || pattern.test(functionName))![0];
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '15' } } });
const file = positionals[0];
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top 15]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMs = new Map<number, number>();
profile.samples.forEach((id, i) => selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
const totalMs = [...selfMs.values()].reduce((a, b) => a + b, 0);
const busyMs = totalMs - [...selfMs].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, ms]) => a + ms, 0);

const areas = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, ms] of selfMs) {
  const node = byId.get(id)!;
  areas.set(area(node), (areas.get(area(node)) ?? 0) + ms);
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|actors|bus|storage|gateway)\//, '$1/')}:${lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + ms);
}
const share = (ms: number) => `${fixed((100 * ms) / busyMs, 1)} %`;
console.log(`${file}: ${fixed(totalMs / 1000, 1)} s profiled, ${fixed(busyMs / 1000, 1)} s busy (shares below are of busy time)`);
printTable('Self time by area', ['area', 'busy share', 's'], [...areas].filter(([name]) => name !== 'idle').sort((a, b) => b[1] - a[1]).map(([name, ms]) => [name, share(ms), fixed(ms / 1000, 1)]));
printTable(
  'Self time by function',
  ['function', 'busy share', 's'],
  [...functions].filter(([name]) => !name.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)).map(([name, ms]) => [name, share(ms), fixed(ms / 1000, 1)]),
);
