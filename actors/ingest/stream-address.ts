// How ffprobe and ffmpeg learn the stream's URI without it being on their command lines, which
// any local user reads in /proc/<pid>/cmdline: the URI holds the stream key (an RTMP path, an
// RTSP token, user:password). The command line carries a placeholder that names the session and
// the stream's scheme, host and port; the URI goes in the environment, which only the decoder's
// own user and root can read, and the egress guard preloaded into every decoder
// (actors/egress/guard.c) puts it in the placeholder's place before ffmpeg's main() runs, then
// wipes the variable. Without the guard the placeholder is no protocol ffmpeg knows: the pull
// fails rather than goes anywhere unchecked.
import { parseStreamUri } from '../../bus/stream-uri.ts';

/** Read by guard.c: both names are written there too. */
export const STREAM_URI_VARIABLE = 'EMO_STREAM_URI';
export const STREAM_PLACEHOLDER_PREFIX = 'emo-stream:';

/** What the decoders' command lines show for the URI: `emo-stream:<session>:rtmp://host:port`. */
export function streamPlaceholder(session: string, uri: string): string {
  return `${STREAM_PLACEHOLDER_PREFIX}${session}:${parseStreamUri(uri).display}`;
}

/** The variable that hands the URI to the guard. */
export function streamUriEnvironment(uri: string): Record<string, string> {
  return { [STREAM_URI_VARIABLE]: uri };
}
