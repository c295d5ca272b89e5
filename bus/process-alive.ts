// Whether a process still runs, by its pid: for claims and leftovers (a socket folder, a test
// port, a network rule) whose owner may have died without cleaning up.

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
