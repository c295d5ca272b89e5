// Builds the two command lines of one pull: ffprobe, which describes the streams as JSON, and
// ffmpeg, which splits them into raw PCM audio and PPM frames, each written to an output we
// name (the host's unix sockets, media-socket.ts). Both open the input with the same options.
// The input is a placeholder, never the URI itself (stream-address.ts). Pure: no I/O, so every
// flag is unit-testable.
import { basename, dirname, join } from 'node:path';
import { parseStreamUri, type StreamProtocol } from '../../bus/stream-uri.ts';
import { streamPlaceholder } from './stream-address.ts';

const AUDIO_SAMPLE_RATE = 16000;
export const AUDIO_BYTES_PER_SECOND = AUDIO_SAMPLE_RATE * 2; // mono s16le
const MAX_ANALYSIS_SIDE = 640;

// Everything rtmp, rtmps and rtsp need underneath, and nothing that could read local files or
// reach other services (file, http, concat, pipe, unix, data, ...). The whitelist is an input
// option: it binds the stream we open, not our own `unix:` outputs.
export const INPUT_PROTOCOLS = ['rtmp', 'rtmps', 'rtsp', 'tcp', 'tls', 'udp', 'rtp'] as const;

// The demuxers of those protocols (an RTMP stream is FLV; RTSP carries its tracks over RTP
// itself) and the decoders of what live encoders and IP cameras send. Every other demuxer and
// decoder ffmpeg ships, each a parser of hostile bytes, stays closed to a stream server.
export const INPUT_FORMATS = ['flv', 'live_flv', 'rtsp'] as const;
export const INPUT_DECODERS = ['h264', 'hevc', 'aac', 'mp3', 'opus', 'pcm_mulaw', 'pcm_alaw'] as const;

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

// The decoders refuse pictures with more pixels than 1920x1080, in ffprobe as in ffmpeg: the
// 1080p rule (actors/session/worker.ts) before anything is allocated for such a picture, and its
// backstop against a server that switches to a bigger picture after probing.
export const MAX_PIXELS = 1920 * 1080;

// Finding the streams must see a keyframe to find the video: 3 s covers the 2 s keyframe
// interval streaming platforms ask encoders for (with 1 s, half the pulls of such a stream saw
// no video and failed). Without a limit it keeps waiting for an audio stream an RTMP server
// announced but never sends. ffprobe and ffmpeg read at most PROBE_BYTES doing so.
const PROBE_SECONDS = 3;
const PROBE_BYTES = 5_000_000;
// The streams' own frame rate is never used (frames are taken at ANALYSIS_FPS by the fps
// filter), and estimating it held every probe of an RTMP stream to the end of PROBE_SECONDS:
// without it, one with audio and video is found in about 0.9 s instead of 3.4 s, by ffprobe and
// again by ffmpeg, so a pull (a start, a reconnect, a takeover) has its first picture after about
// 3 s instead of 7 (ops/bench/README-stream-probe.md). An RTMP stream with one kind of media
// still waits out PROBE_SECONDS for the other.
const FPS_PROBE_FRAMES = 0;

export interface InputOptions {
  uri: string;
  /** Named on the decoders' command lines in the URI's place, so `ps` tells which session each serves. */
  session: string;
  timeoutSeconds: number;
  /** For rtmps: verify the server certificate, against `caFile` or the system's CAs. */
  tls?: { verify: boolean; caFile?: string };
}

export interface PullOptions extends InputOptions {
  fps: number;
}

/**
 * Where ffmpeg writes each stream (`unix:<path>`: unixOutput()). Only the streams ffprobe found
 * have one: ffmpeg refuses an output with no stream.
 */
export interface MediaOutputs {
  audio?: string;
  video?: string;
}

export interface IngestArgsOptions extends PullOptions {
  outputs: MediaOutputs;
}

/** ffmpeg's URL for writing to the unix socket listening at `path`. */
export function unixOutput(path: string): string {
  return `unix:${path}`;
}

function timeoutArgs(scheme: StreamProtocol, timeoutSeconds: number): string[] {
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

/**
 * How ffprobe and ffmpeg open the stream: the protocols, formats and decoders, the bounds on
 * probing and picture size (so a stream announcing 16384x16384 cannot take gigabytes in either),
 * the timeouts and TLS checks they share.
 */
function inputArgs(options: InputOptions): string[] {
  const { uri, timeoutSeconds, tls } = options;
  if (!(timeoutSeconds > 0)) throw new Error(`timeoutSeconds must be > 0, got ${timeoutSeconds}`);
  // Checked when the session was created; checked again here, where a URI becomes arguments.
  const scheme = parseStreamUri(uri).protocol;
  const args = [
    '-protocol_whitelist', INPUT_PROTOCOLS.join(','),
    '-format_whitelist', INPUT_FORMATS.join(','),
    '-codec_whitelist', INPUT_DECODERS.join(','),
    '-analyzeduration', String(PROBE_SECONDS * 1e6), '-probesize', String(PROBE_BYTES), '-fpsprobesize', String(FPS_PROBE_FRAMES),
    '-max_pixels', String(MAX_PIXELS),
  ];
  args.push(...timeoutArgs(scheme, timeoutSeconds));
  if (scheme === 'rtmps' && tls) args.push(...tlsArgs(tls));
  return args;
}

/** `-i` and what the guard replaces with the URI from the environment. */
function inputArg(options: InputOptions): string[] {
  return ['-i', streamPlaceholder(options.session, options.uri)];
}

/**
 * ffprobe's description of the streams as JSON on stdout: each stream's type and picture size,
 * nothing else (no tags: they are the server's text). Errors only on stderr.
 */
export function buildProbeArgs(options: InputOptions): string[] {
  return [
    '-hide_banner', '-loglevel', 'error', ...inputArgs(options), ...inputArg(options),
    '-of', 'json', '-show_entries', 'stream=codec_type,width,height',
  ];
}

/** Throws on options no pull may run with: a URI we must not open, a timeout or rate out of range. */
export function checkPullOptions(options: PullOptions): void {
  if (!(options.fps > 0)) throw new Error(`fps must be > 0, got ${options.fps}`);
  inputArgs(options);
  inputArg(options);
}

export function buildIngestArgs(options: IngestArgsOptions): string[] {
  const { fps, outputs: { audio, video } } = options;
  checkPullOptions(options);
  if (!audio && !video) throw new Error('at least one of audio and video is needed');

  // stderr is read only to name a failure: errors are all it needs.
  const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', ...inputArgs(options)];
  // Low latency: no demuxer buffering, one decoder thread (no frame-thread delay, and many
  // sessions share few cores), frames kept in stored orientation so the size stays predictable.
  args.push('-fflags', 'nobuffer', '-flags', 'low_delay', '-threads', '1', '-noautorotate');
  // Decode only what a few frames a second need: frames no other frame refers to are never
  // shown to the analysis at 4 of 30 fps anyway, and deblocking costs a sixth of the decode
  // for an edge smoothing that the downscale to 640 px mostly removes again. Together they
  // halve the decode (ops/bench/README-capacity.md). Audio decoders are untouched (`:v`).
  args.push('-skip_frame:v', 'noref', '-skip_loop_filter:v', 'all');
  // A stream that changes resolution mid-way keeps the filter graph built for its first size, so
  // every frame on the pipe stays the size announced in `info` (the scaler adapts to the input).
  args.push('-reinit_filter', '0');
  args.push(...inputArg(options));

  // The streams ffprobe found, by type: a stream that is gone by now fails the run plainly.
  if (audio) {
    args.push('-map', '0:a:0', '-ac', '1', '-ar', String(AUDIO_SAMPLE_RATE), '-c:a', 'pcm_s16le');
    args.push('-f', 's16le', '-flush_packets', '1', audio);
  }
  if (video) {
    // fps before scale: frames that will be dropped are never scaled. PPM images carry their
    // own size, so each frame is cut by what ffmpeg wrote, not by what anyone said on stderr.
    args.push('-map', '0:v:0', '-vf', `fps=${fps},${scaleFilter()}`, '-pix_fmt', 'rgb24');
    args.push('-c:v', 'ppm', '-fps_mode', 'passthrough');
    args.push('-f', 'image2pipe', '-flush_packets', '1', video);
  }
  return args;
}

/** ffprobe from the same installation as ffmpeg: Debian ships them side by side. */
export function ffprobePath(ffmpegPath: string): string {
  const name = basename(ffmpegPath);
  const at = name.lastIndexOf('ffmpeg');
  if (at < 0) throw new Error(`cannot tell where ffprobe is from the ffmpeg path "${ffmpegPath}"`);
  // join('.', 'ffprobe') is 'ffprobe': a bare name stays one, found on PATH like ffmpeg.
  return join(dirname(ffmpegPath), `${name.slice(0, at)}ffprobe${name.slice(at + 'ffmpeg'.length)}`);
}
