// The end of a test run: what failed, the slowest files, the time taken, and the line
// "N passed, N failed" that CI reads, with ", N skipped" when tests were skipped.
import type { FileOutcome } from './run-file.ts';

const SLOWEST = 10;

/** Prints the summary; returns the number of failed tests. */
export function reportRun(outcomes: FileOutcome[], elapsedMs: number): number {
  const passed = outcomes.reduce((sum, outcome) => sum + outcome.passed, 0);
  const failed = outcomes.reduce((sum, outcome) => sum + outcome.failed, 0);
  const skipped = outcomes.reduce((sum, outcome) => sum + outcome.skipped, 0);
  const busyMs = outcomes.reduce((sum, outcome) => sum + outcome.ms, 0);
  const cpuSeconds = outcomes.reduce((sum, outcome) => sum + outcome.cpuSeconds, 0);
  const line = (outcome: FileOutcome) =>
    `  ${(outcome.ms / 1000).toFixed(1).padStart(6)} s  ${outcome.cpuSeconds.toFixed(0).padStart(4)} s of CPU  ${outcome.file}`;
  const slowest = [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  const costliest = [...outcomes].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, SLOWEST);
  console.log(`\nSlowest files:\n${slowest.map(line).join('\n')}`);
  console.log(`\nCostliest files (their processes' CPU, what lanes side by side share):\n${costliest.map(line).join('\n')}`);
  console.log(`${outcomes.length} files in ${(elapsedMs / 1000).toFixed(0)} s (${(busyMs / 1000).toFixed(0)} s of files side by side, ${cpuSeconds.toFixed(0)} s of CPU)`);
  const failures = outcomes.flatMap((outcome) => outcome.failures);
  if (failures.length > 0) console.log(`\nFailed:\n${failures.map((failure) => `  ${failure}`).join('\n')}`);
  console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
  return failed;
}
