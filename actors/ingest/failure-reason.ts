// Why ffmpeg or ffprobe failed, in our own fixed words. Their stderr mixes their messages with
// the stream server's text (an RTMP error description, an RTSP reason phrase, newlines
// included) and echoes the stream URI with any credentials in it, so no part of it is ever
// repeated: each line is only matched against known messages, and the best match picks one of
// the phrases below. A server can at worst make us pick the wrong phrase.

/** A decoder refused the picture: ffprobe before describing the stream, or ffmpeg later. */
export const PICTURE_TOO_LARGE = 'picture larger than 1920x1080';

/** The decoder never got the stream's URI in its placeholder's place (stream-address.ts). */
export const NO_STREAM_URI = 'stream URI not handed to the decoder (egress guard missing or outdated)';

// Most specific first: a refused connect is also an "Input/output error" further down.
const RULES: [RegExp, string][] = [
  [/exceeds specified max pixel count/, PICTURE_TOO_LARGE],
  // The guard refused a placeholder it had no URI for, or no guard replaced it.
  [/^egress guard: no stream URI|^emo-stream:.*Protocol not found/, NO_STREAM_URI],
  // An RTMP server's error: its description follows, and may hold any of the messages below.
  [/^\[rtmp @ [^\]]*\] Server error/, 'server refused the stream'],
  // The egress guard fails a connect it refuses with EACCES.
  [/Permission denied/, 'connection not allowed by the egress policy'],
  [/Failed to resolve hostname/, 'host name not resolved'],
  [/Connection refused/, 'connection refused'],
  [/No route to host|Network is unreachable|Host is unreachable/, 'host unreachable'],
  [/^\[tls @ [^\]]*\] .*(certificate|verif)/i, 'TLS certificate not trusted'],
  [/^\[tls @ /, 'TLS handshake failed'],
  [/Server returned 404/, 'stream not found'],
  [/Server returned [45]|^\[rtsp @ [^\]]*\] method \w+ failed/, 'server refused the stream'],
  [/timed out/i, 'timed out'],
  [/matches no streams/, 'stream changed after probing'],
  [/Invalid data found when processing input/, 'invalid stream data'],
  [/Input\/output error/, 'connection failed'],
];

// Longer lines are cut: only their start is matched, and a server cannot make us hoard text.
const MAX_LINE = 1024;

export class FailureReason {
  // The index of the most specific rule any line matched so far.
  private best = RULES.length;
  private partial = '';

  constructor(private readonly program: string) {}

  /** A chunk of stderr, split anywhere. */
  write(text: string): void {
    const lines = (this.partial + text).split(/\r\n|\r|\n/);
    this.partial = (lines.pop() ?? '').slice(0, MAX_LINE);
    for (const line of lines) this.match(line);
  }

  /** Our words for the end of the process: a matched message, else how it exited. */
  reason(code: number | null, signal: NodeJS.Signals | null): string {
    this.match(this.partial);
    this.partial = '';
    const matched = RULES[this.best];
    if (matched) return matched[1];
    if (code === 0) return 'stream ended';
    if (signal) return `${this.program} ended by ${signal}`;
    return `${this.program} failed (exit code ${code})`;
  }

  private match(line: string): void {
    const head = line.slice(0, MAX_LINE);
    for (let i = 0; i < this.best; i++) {
      if (RULES[i]![0].test(head)) {
        this.best = i;
        return;
      }
    }
  }
}
