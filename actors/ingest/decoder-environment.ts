// The environment ffmpeg and ffprobe run in. They parse whatever a stream server sends, so a
// decoder exploit must find nothing there worth stealing: none of the service's credentials
// (NATS_URL with its password, CLICKHOUSE_PASSWORD, tokens), only what running needs. Their
// stream's URI comes this way too, not on the command line that any local user reads; the egress
// guard takes it out again before the decoder's main() (stream-address.ts).
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'TZ'] as const;

/** The inherited variables that are set, plus `extra` (the egress guard's library and policy, the stream's URI). */
export function decoderEnvironment(extra: Record<string, string> = {}, inherited: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = inherited[name];
    if (value !== undefined) kept[name] = value;
  }
  return { ...kept, ...extra };
}
