// Publishing a pre-encoded clip as a live stream, looped without re-encoding at its own pace
// (about 1% of a core) or many times faster (a recorded file pushed as fast as the server
// takes it), and waiting until a stream can actually be played.
import { execFile } from 'node:child_process';
import { startService } from '../../stack/process.ts';

export interface Publisher {
  pid: number;
  stop(): Promise<void>;
}

// rtmp(s) URLs get FLV; udp URLs (the RTSP server's feeds) get MPEG-TS.
function outputFormat(url: string): string[] {
  if (/^rtmps?:\/\//.test(url)) return ['-f', 'flv'];
  if (/^udp:\/\//.test(url)) return ['-f', 'mpegts'];
  throw new Error(`cannot publish to ${url}`);
}

/**
 * A clip read twenty times faster than real time is as good as pushed at wire speed for a
 * reader held to real time: its server always has media waiting. Unbounded, a looped copy takes
 * a whole core for nothing but the loop, away from the service the test is about.
 */
export const TOO_FAST = 20;

/** Publishes `clip` looped, at `speed` times real time. */
export function publish(clip: string, url: string, ffmpegPath = 'ffmpeg', speed = 1): Publisher {
  const target = /^udp:\/\//.test(url) && !url.includes('?') ? `${url}?pkt_size=1316` : url;
  const publisher = startService(speed === 1 ? 'publisher' : `publisher at ${speed}x`, ffmpegPath, [
    '-hide_banner', '-nostdin', '-nostats', '-loglevel', 'warning',
    '-readrate', String(speed), '-stream_loop', '-1', '-i', clip,
    '-c', 'copy', ...outputFormat(url), target,
  ], { graceMs: 2000 });
  return { pid: publisher.pid, stop: () => publisher.stop() };
}

function timeoutArgs(url: string, seconds: number): string[] {
  const micros = String(seconds * 1e6);
  return url.startsWith('rtsp://') ? ['-rtsp_transport', 'tcp', '-timeout', micros] : ['-rw_timeout', micros];
}

// One stream found is enough to know the publisher is through, and the service probes the
// stream itself. With ffprobe's defaults each probe of an RTMP stream took 5-6 s: it estimates
// the frame rate, and waits out 5 s for a kind of media the server announced but the clip lacks.
// Held to half a second, a probe answers in 1-1.5 s; one that finds nothing is retried.
const PROBE_ARGS = ['-fpsprobesize', '0', '-analyzeduration', '500000'];

function probeOnce(url: string, ffprobePath: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      ffprobePath,
      ['-v', 'error', ...timeoutArgs(url, 5), ...PROBE_ARGS, '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', url],
      { timeout: 10_000, killSignal: 'SIGKILL' },
      (error, stdout) => resolve(!error && /video|audio/.test(stdout)),
    );
  });
}

// Resolves once ffprobe sees a stream at `url`; rejects after timeoutMs. A busy machine (test
// lanes side by side) can take tens of seconds to get a publisher's first packets through.
export async function waitForStream(url: string, timeoutMs = 60_000, ffprobePath = 'ffprobe'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probeOnce(url, ffprobePath))) {
    if (Date.now() > deadline) throw new Error(`no stream at ${url} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
