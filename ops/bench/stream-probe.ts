// How long a pull waits before its first frame: ffprobe describing a live RTMP stream, then
// ffmpeg opening it again and decoding its first picture, with the input's probe bounds of
// actors/ingest/ffmpeg-args.ts (3 s, 5 MB), with and without estimating the stream's frame rate
// (`-fpsprobesize 0`, what the service passes). Streams: a clip with audio and video, and one
// with video only, each looped live by nginx-rtmp (keyframe every second).
// Usage: node --import tsx ops/bench/stream-probe.ts [runs per case]
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig } from '../../bus/index.ts';
import { ffprobePath } from '../../actors/ingest/index.ts';
import { makeClip, type ClipAudio } from '../support/clips.ts';
import { freePort } from '../stack/index.ts';
import { publish, waitForStream, type Publisher } from '../support/streams/publish.ts';
import { startRtmpServer } from '../support/streams/rtmp-server.ts';
import { elapsedMs, fixed, percentile, printTable } from './lib/stats.ts';

const [runs = 8] = process.argv.slice(2).map(Number);
const config = readConfig();
const dir = join(config.varDir, 'bench', 'stream-probe');
mkdirSync(dir, { recursive: true });

const PROBE = ['-analyzeduration', '3000000', '-probesize', '5000000'];
const MODES = { 'as before (frame rate estimated)': [], 'as the service (-fpsprobesize 0)': ['-fpsprobesize', '0'] } as const;

/** Milliseconds until the command exits, and its stdout. */
function timed(file: string, args: string[]): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 20_000 }, (_error, stdout) => resolve({ ms: elapsedMs(started), stdout }));
  });
}

const streams: { name: string; audio: ClipAudio }[] = [
  { name: 'audio and video', audio: { type: 'tones', tones: [{ hz: 220, seconds: 3 }, { hz: 330, seconds: 3 }] } },
  { name: 'video only', audio: { type: 'none' } },
];

const rtmp = await startRtmpServer({ dir: join(dir, 'rtmp'), rtmpPort: await freePort(), rtmpsPort: await freePort() });
const publishers: Publisher[] = [];
const rows: string[][] = [];
try {
  for (const [index, stream] of streams.entries()) {
    const clip = await makeClip({ width: 640, height: 360, seconds: 6, fps: 15, container: 'flv', video: { type: 'testsrc' }, audio: stream.audio }, join(dir, 'clips'));
    const url = rtmp.url(`probe-${index}`);
    publishers.push(publish(clip, url));
    await waitForStream(url);
    for (const [mode, extra] of Object.entries(MODES)) {
      const probeMs: number[] = [];
      const firstFrameMs: number[] = [];
      let videoFound = 0;
      for (let run = 0; run < runs; run++) {
        const probe = await timed(ffprobePath(config.ffmpegPath), ['-v', 'error', ...PROBE, ...extra, '-i', url, '-of', 'csv=p=0', '-show_entries', 'stream=codec_type']);
        probeMs.push(probe.ms);
        if (probe.stdout.includes('video')) videoFound++;
        const pull = await timed(config.ffmpegPath, ['-v', 'error', '-nostdin', ...PROBE, ...extra, '-fflags', 'nobuffer', '-i', url, '-map', '0:v:0', '-frames:v', '1', '-f', 'null', '-']);
        firstFrameMs.push(pull.ms);
      }
      const summary = (values: number[]) => `${fixed(percentile(values, 50), 0)} / ${fixed(Math.max(...values), 0)}`;
      rows.push([stream.name, mode, summary(probeMs), summary(firstFrameMs), `${videoFound} / ${runs}`]);
    }
  }
} finally {
  await Promise.all(publishers.map((publisher) => publisher.stop()));
  await rtmp.stop();
}
printTable(`Time to describe a live RTMP stream and to its first picture, ${runs} runs each (ms, median / max)`,
  ['stream', 'probe', 'ffprobe', 'ffmpeg to first picture', 'video found'], rows);
