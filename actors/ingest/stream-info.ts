// What a stream holds, read from ffprobe's JSON description (ffmpeg's own structured output;
// the server's text never lands in it as anything but an escaped string value). stderr says
// nothing here: a server can print anything there.
import { Type } from '@sinclair/typebox';
import { checker } from '../../bus/validate.ts';

// ffmpeg and every codec it has keep picture sides below 65536.
const Side = Type.Integer({ minimum: 0, maximum: 65535 });

const ProbeOutput = Type.Object({
  streams: Type.Array(
    Type.Object({
      codec_type: Type.Optional(Type.String({ maxLength: 32 })),
      width: Type.Optional(Side),
      height: Type.Optional(Side),
    }),
    { maxItems: 256 },
  ),
});

export interface StreamInfo {
  hasAudio: boolean;
  hasVideo: boolean;
  // The first video stream's picture size (0 without video).
  width: number;
  height: number;
}

/** The streams ffprobe found, or why they cannot be pulled, in our words. */
export function readProbeOutput(json: string): StreamInfo | { failure: string } {
  let output: unknown;
  try {
    output = JSON.parse(json);
  } catch {
    return { failure: 'stream description not understood' };
  }
  if (!checker(ProbeOutput).Check(output)) return { failure: 'stream description not understood' };
  const { streams } = output;
  // ffmpeg's `-map 0:v:0` and `0:a:0` take the first of each type, in this same order.
  const video = streams.find((stream) => stream.codec_type === 'video');
  const hasAudio = streams.some((stream) => stream.codec_type === 'audio');
  if (!video && !hasAudio) return { failure: 'stream has no audio or video' };
  if (!video) return { hasAudio, hasVideo: false, width: 0, height: 0 };
  const { width = 0, height = 0 } = video;
  if (width === 0 || height === 0) return { failure: 'picture size unknown' };
  return { hasAudio, hasVideo: true, width, height };
}
