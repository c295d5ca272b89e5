// One ffprobe run on a stream, before ffmpeg pulls it: which streams it has and the picture
// size, from ffprobe's JSON. Never rejects: a failure comes back in our own words.
import { spawn } from 'node:child_process';
import { decoderEnvironment } from './decoder-environment.ts';
import { buildProbeArgs, type InputOptions } from './ffmpeg-args.ts';
import { FailureReason } from './failure-reason.ts';
import { readProbeOutput, type StreamInfo } from './stream-info.ts';

export interface ProbeOptions extends InputOptions {
  ffprobePath: string;
  /** ffprobe's whole environment besides PATH and the locale: the egress guard's library and policy. */
  env?: Record<string, string>;
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
  const { ffprobePath, env, deadlineSeconds, signal } = options;
  return new Promise((resolve) => {
    const child = spawn(ffprobePath, buildProbeArgs(options), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: decoderEnvironment(env),
    });
    const stderr = new FailureReason('ffprobe');
    const output: Buffer[] = [];
    let outputBytes = 0;
    let failure: string | undefined;
    const kill = (reason: string) => {
      failure ??= reason;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill('stopped');
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) onAbort();
    const deadline = setTimeout(() => kill('timed out'), deadlineSeconds * 1000);

    child.on('error', (error) => (failure ??= `cannot run ${ffprobePath}: ${error.message}`));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => stderr.write(text));
    child.stdout.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > MAX_OUTPUT_BYTES) kill('stream description not understood');
      else output.push(chunk);
    });
    child.on('close', (code, exitSignal) => {
      clearTimeout(deadline);
      signal.removeEventListener('abort', onAbort);
      if (!failure && code !== 0) failure = stderr.reason(code, exitSignal);
      if (failure) {
        resolve({ failure, code, exitSignal });
        return;
      }
      const info = readProbeOutput(Buffer.concat(output).toString('utf8'));
      resolve('failure' in info ? { ...info, code, exitSignal } : info);
    });
  });
}
