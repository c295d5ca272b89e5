// A local RTSP server: rtsp-server.py (GStreamer) serves each mount from a loopback UDP feed
// into which a publisher loops the mount's clip. stop() ends the feeds and the server.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freeUdpPort } from '../../stack/ports.ts';
import { startService, waitForPorts } from '../../stack/process.ts';
import { publish, type Publisher } from './publish.ts';

export interface RtspServer {
  url(mount: string): string;
  stop(): Promise<void>;
}

const SCRIPT = join(import.meta.dirname, 'rtsp-server.py');

function hasAudio(clip: string): boolean {
  const streams = execFileSync('ffprobe', [
    '-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', clip,
  ], { encoding: 'utf8' });
  return /audio/.test(streams);
}

function mountPath(mount: string): string {
  return `/${mount.replace(/^\/+/, '')}`;
}

export async function startRtspServer(options: {
  dir: string;
  port: number;
  mounts: Record<string, string>;
}): Promise<RtspServer> {
  const { dir, port, mounts } = options;
  mkdirSync(dir, { recursive: true });
  const feeds: { path: string; udpPort: number; audio: boolean; clip: string }[] = [];
  for (const [mount, clip] of Object.entries(mounts)) {
    feeds.push({ path: mountPath(mount), udpPort: await freeUdpPort(), audio: hasAudio(clip), clip });
  }
  const spec = JSON.stringify({ port, mounts: feeds.map(({ clip: _clip, ...mount }) => mount) });
  const server = startService('rtsp-server', '/usr/bin/python3', [SCRIPT, spec], { logFile: join(dir, `rtsp-${port}.log`), graceMs: 2000 });
  const publishers: Publisher[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(publishers.map((publisher) => publisher.stop()));
    await server.stop();
  };
  try {
    await waitForPorts(server, [port]);
    for (const feed of feeds) publishers.push(publish(feed.clip, `udp://127.0.0.1:${feed.udpPort}`));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: (mount) => `rtsp://127.0.0.1:${port}${mountPath(mount)}`, stop };
}
