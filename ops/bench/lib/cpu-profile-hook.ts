// Loaded into a service process by the capacity benchmark's --profile (NODE_OPTIONS refuses
// --cpu-prof): profiles the main thread with V8's sampler from start to exit and writes
// <CPU_PROFILE_DIR>/<script>-<pid>.cpuprofile, the format Chrome DevTools and
// ops/bench/profile-summary.ts read.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { basename, dirname, join } from 'node:path';

const dir = process.env.CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // A session on this thread answers synchronously, so the profile is written before exit.
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (error) return;
      const script = process.argv[1] ?? 'node';
      const name = `${basename(dirname(script))}-${basename(script, '.ts')}-${process.pid}.cpuprofile`;
      writeFileSync(join(dir, name), JSON.stringify(result.profile));
    });
  });
}
