// One ffprobe run on a stream, before ffmpeg pulls it: which streams it has and the picture
// size, from ffprobe's JSON. Never rejects: a failure comes back in our own words.
import { decoderEnvironment } from './decoder-environment.ts';
import type { DecoderSpawner } from './decoder-spawner.ts';
import { buildProbeArgs, type InputOptions } from './ffmpeg-args.ts';
import { FailureReason } from './failure-reason.ts';
import { streamUriEnvironment } from './stream-address.ts';
import { readProbeOutput, type StreamInfo } from './stream-info.ts';

export interface ProbeOptions extends InputOptions {
  ffprobePath: string;
  /** Starts ffprobe, so the host's thread never forks. */
  decoders: DecoderSpawner;
  /**
   * ffprobe's whole environment besides PATH, the locale and the stream's URI: the egress guard's
   * library and policy. The guard is what hands ffprobe the URI (stream-address.ts).
   */
  env: Record<string, string>;
  /** ffprobe is killed past this, whatever the server trickles to keep it busy. */
  deadlineSeconds: number;
  /** Aborting kills ffprobe; the result is then a failure "stopped". */
  signal: AbortSignal;
}

export interface ProbeFailure {
  failure: string;
  code: number | null;
  exitSignal: NodeJS.Signals | null;
}

// A description holds a few short lines per stream; more is not one we want to read.
const MAX_OUTPUT_BYTES = 64 * 1024;

export function probeStream(options: ProbeOptions): Promise<StreamInfo | ProbeFailure> {
  const { uri, ffprobePath, decoders, env, deadlineSeconds, signal } = options;
  return new Promise((resolve) => {
    const probe = decoders.run({ file: ffprobePath, args: buildProbeArgs(options), env: decoderEnvironment({ ...env, ...streamUriEnvironment(uri) }), stdout: true });
    const stderr = new FailureReason('ffprobe');
    const output: string[] = [];
    let outputBytes = 0;
    let failure: string | undefined;
    const kill = (reason: string) => {
      failure ??= reason;
      probe.kill('SIGKILL');
    };
    const onAbort = () => kill('stopped');
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) onAbort();
    const deadline = setTimeout(() => kill('timed out'), deadlineSeconds * 1000);

    probe.on('unstartable', (message) => (failure ??= `cannot run ${ffprobePath}: ${message}`));
    probe.on('stderr', (text) => stderr.write(text));
    probe.on('stdout', (text) => {
      outputBytes += Buffer.byteLength(text);
      if (outputBytes > MAX_OUTPUT_BYTES) kill('stream description not understood');
      else output.push(text);
    });
    probe.on('exit', ({ code, signal: exitSignal, lost }) => {
      clearTimeout(deadline);
      signal.removeEventListener('abort', onAbort);
      if (lost) failure ??= lost;
      if (!failure && code !== 0) failure = stderr.reason(code, exitSignal);
      if (failure) {
        resolve({ failure, code, exitSignal });
        return;
      }
      const info = readProbeOutput(output.join(''));
      resolve('failure' in info ? { ...info, code, exitSignal } : info);
    });
  });
}
