// Summaries and the plain-text tables every benchmark prints.
export { percentile } from '../../support/percentile.ts';

export function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Milliseconds since `since` (a performance.now() reading). */
export const elapsedMs = (since: number) => performance.now() - since;

/** CPU seconds (user + system, all threads of this process) spent while `work` ran. */
export async function cpuSecondsOf<T>(work: () => Promise<T>): Promise<{ result: T; cpuSeconds: number; wallSeconds: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const used = process.cpuUsage(cpu);
  return { result, cpuSeconds: (used.user + used.system) / 1e6, wallSeconds: elapsedMs(started) / 1000 };
}

export const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** A markdown table with padded columns, readable as plain text too. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(`\n${title}\n`);
  console.log(markdownTable(header, rows));
  console.log('');
}
