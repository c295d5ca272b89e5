// Publishing a pre-encoded clip as a live stream, looped at its own pace without re-encoding
// (about 1% of a core), or as fast as the server takes it (a recorded file pushed at wire
// speed), and waiting until a stream can actually be played.
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

export type PublishPace = 'real-time' | 'wire-speed';

export function publish(clip: string, url: string, ffmpegPath = 'ffmpeg', pace: PublishPace = 'real-time'): Publisher {
  const target = /^udp:\/\//.test(url) && !url.includes('?') ? `${url}?pkt_size=1316` : url;
  const publisher = startService(pace === 'real-time' ? 'publisher' : 'wire-speed publisher', ffmpegPath, [
    '-hide_banner', '-nostdin', '-nostats', '-loglevel', 'warning',
    ...(pace === 'real-time' ? ['-re'] : []), '-stream_loop', '-1', '-i', clip,
    '-c', 'copy', ...outputFormat(url), target,
  ], { graceMs: 2000 });
  return { pid: publisher.pid, stop: () => publisher.stop() };
}

function timeoutArgs(url: string, seconds: number): string[] {
  const micros = String(seconds * 1e6);
  return url.startsWith('rtsp://') ? ['-rtsp_transport', 'tcp', '-timeout', micros] : ['-rw_timeout', micros];
}

function probeOnce(url: string, ffprobePath: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      ffprobePath,
      ['-v', 'error', ...timeoutArgs(url, 5), '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', url],
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
