// Builds the ffmpeg command line that pulls one live stream and splits it into raw PCM audio
// (fd 3) and raw RGB frames (fd 4). Pure: no I/O, so every flag is unit-testable.

export const AUDIO_FD = 3;
export const VIDEO_FD = 4;
export const AUDIO_SAMPLE_RATE = 16000;
export const AUDIO_BYTES_PER_SECOND = AUDIO_SAMPLE_RATE * 2; // mono s16le
export const MAX_ANALYSIS_SIDE = 640;

// Everything rtmp, rtmps and rtsp need underneath, and nothing that could read local files or
// reach other services (file, http, concat, pipe, data, ...). The whitelist is an input option:
// it binds the stream we open, not our own `pipe:N` outputs.
export const INPUT_PROTOCOLS = ['rtmp', 'rtmps', 'rtsp', 'tcp', 'tls', 'udp', 'rtp'] as const;

export type StreamScheme = 'rtmp' | 'rtmps' | 'rtsp';

export function streamScheme(uri: string): StreamScheme {
  const match = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme === 'rtmp' || scheme === 'rtmps' || scheme === 'rtsp') return scheme;
  throw new Error(`unsupported stream scheme in "${uri}" (rtmp, rtmps or rtsp expected)`);
}

export interface FrameSize {
  width: number;
  height: number;
}

// The size frames are delivered at: the longer side at most maxSide, aspect kept, both sides
// even. The same arithmetic is written as an ffmpeg expression in scaleFilter(); both evaluate
// in IEEE doubles in the same order, so they agree to the pixel.
export function analysisSize(input: FrameSize, maxSide = MAX_ANALYSIS_SIDE): FrameSize {
  const longer = Math.max(input.width, input.height);
  const target = Math.min(maxSide, longer);
  const side = (length: number): number => 2 * Math.max(1, Math.round((length * target) / longer / 2));
  return { width: side(input.width), height: side(input.height) };
}

export function scaleFilter(maxSide = MAX_ANALYSIS_SIDE): string {
  const side = (length: 'iw' | 'ih'): string =>
    `2*max(1,round(${length}*min(${maxSide},max(iw,ih))/max(iw,ih)/2))`;
  return `scale=w='${side('iw')}':h='${side('ih')}':flags=area`;
}

export interface IngestArgsOptions {
  uri: string;
  fps: number;
  timeoutSeconds: number;
  // Which outputs to open. ffmpeg refuses an output with no stream, so a stream known to lack
  // audio (or video) is pulled again without that output.
  audio?: boolean;
  video?: boolean;
  // How long ffmpeg may read to discover the streams (its default when absent). Short once the
  // streams are known: otherwise ffmpeg keeps waiting for an audio stream that never comes.
  probeSeconds?: number;
  /** For rtmps: verify the server certificate, against `caFile` or the system's CAs. */
  tls?: { verify: boolean; caFile?: string };
}

function timeoutArgs(scheme: StreamScheme, timeoutSeconds: number): string[] {
  const micros = String(Math.round(timeoutSeconds * 1e6));
  // For rtmp, `-timeout` means "listen for an incoming publisher"; only -rw_timeout is safe.
  if (scheme === 'rtsp') return ['-rtsp_transport', 'tcp', '-timeout', micros];
  return ['-rw_timeout', micros];
}

function tlsArgs(tls: { verify: boolean; caFile?: string }): string[] {
  if (!tls.verify) return ['-tls_verify', '0'];
  return ['-tls_verify', '1', '-ca_file', tls.caFile ?? SYSTEM_CA_FILE];
}

const SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

export function buildIngestArgs(options: IngestArgsOptions): string[] {
  const { uri, fps, timeoutSeconds, audio = true, video = true, probeSeconds, tls } = options;
  if (!(fps > 0)) throw new Error(`fps must be > 0, got ${fps}`);
  if (!(timeoutSeconds > 0)) throw new Error(`timeoutSeconds must be > 0, got ${timeoutSeconds}`);
  if (!audio && !video) throw new Error('at least one of audio and video is needed');
  const scheme = streamScheme(uri);

  const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info'];
  args.push('-protocol_whitelist', INPUT_PROTOCOLS.join(','));
  args.push(...timeoutArgs(scheme, timeoutSeconds));
  if (scheme === 'rtmps' && tls) args.push(...tlsArgs(tls));
  // Low latency: no demuxer buffering, one decoder thread (no frame-thread delay, and many
  // sessions share few cores), frames kept in stored orientation so the size stays predictable.
  args.push('-fflags', 'nobuffer', '-flags', 'low_delay', '-threads', '1', '-noautorotate');
  if (probeSeconds !== undefined) args.push('-analyzeduration', String(Math.round(probeSeconds * 1e6)));
  // A stream that changes resolution mid-way keeps the filter graph built for its first size, so
  // every frame on the pipe stays the size announced in `info` (the scaler adapts to the input).
  args.push('-reinit_filter', '0');
  args.push('-i', uri);

  if (audio) {
    args.push('-map', '0:a:0?', '-ac', '1', '-ar', String(AUDIO_SAMPLE_RATE), '-c:a', 'pcm_s16le');
    args.push('-f', 's16le', '-flush_packets', '1', `pipe:${AUDIO_FD}`);
  }
  if (video) {
    // fps before scale: frames that will be dropped are never scaled.
    args.push('-map', '0:v:0?', '-vf', `fps=${fps},${scaleFilter()}`, '-pix_fmt', 'rgb24');
    args.push('-c:v', 'rawvideo', '-fps_mode', 'passthrough');
    args.push('-f', 'rawvideo', '-flush_packets', '1', `pipe:${VIDEO_FD}`);
  }
  return args;
}
