// Reads ffmpeg's stderr, line by line, for what it says about the streams: the input's streams
// and picture size (printed before any frame is decoded), the size of the raw video output, and
// the last line worth reporting when the process ends.

export interface StreamLine {
  file: number;
  index: number;
  kind: 'video' | 'audio' | 'other';
  width?: number;
  height?: number;
}

// "  Stream #0:1[0x101](und): Video: h264 (High), yuv420p(tv, bt709), 1280x720 [SAR 1:1], 30 fps"
const STREAM_LINE = /^\s*Stream #(\d+):(\d+)(?:\[[^\]]*\])?(?:\([^)]*\))?: (\w+): (.*)$/;
const SIZE_FIELD = /^(\d+)x(\d+)(?:\s|$)/;

// Splits "a (b, c), d, e" on the commas outside parentheses.
function fields(description: string): string[] {
  const result: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < description.length; i++) {
    const c = description[i];
    if (c === '(' || c === '[') depth++;
    else if ((c === ')' || c === ']') && depth > 0) depth--;
    else if (c === ',' && depth === 0) {
      result.push(description.slice(start, i).trim());
      start = i + 1;
    }
  }
  result.push(description.slice(start).trim());
  return result;
}

export function parseStreamLine(line: string): StreamLine | undefined {
  const match = STREAM_LINE.exec(line);
  if (!match) return undefined;
  const [, file, index, type, description] = match;
  const kind = type === 'Video' ? 'video' : type === 'Audio' ? 'audio' : 'other';
  const stream: StreamLine = { file: Number(file), index: Number(index), kind };
  if (kind === 'video') {
    for (const field of fields(description ?? '')) {
      const size = SIZE_FIELD.exec(field);
      if (size) {
        stream.width = Number(size[1]);
        stream.height = Number(size[2]);
        break;
      }
    }
  }
  return stream;
}

export interface InputStreams {
  hasVideo: boolean;
  hasAudio: boolean;
  // 0 when ffmpeg could not tell the size before decoding.
  width: number;
  height: number;
}

// Lines that say nothing about why ffmpeg stopped.
const UNINFORMATIVE = [
  /^\s/, // indented stream details and metadata
  /^Exiting normally/,
  /^Conversion failed!?$/,
  /^\s*Last message repeated/,
  /^Press \[q\]/,
  /^(Input|Output) #\d+/,
  /^Stream mapping:/,
  /^(frame|size)=/,
  /^video:\d+kB/,
];

export class StderrReader {
  private section: 'none' | 'input' | 'output' = 'none';
  private outputPipe = '';
  private readonly inputStreams: StreamLine[] = [];
  private mappingSeen = false;
  // The last few lines that say something: the cause (a refused connection, an untrusted
  // certificate) often comes a line or two before ffmpeg's closing line.
  private readonly reasons: string[] = [];
  videoOutputSize: { width: number; height: number } | undefined;
  // Set when ffmpeg refused to start because an output would have no stream.
  emptyOutput = false;

  // Returns true when this line completed the input description (the stream mapping follows it).
  read(line: string): boolean {
    if (line.trim() === '') return false;
    if (!UNINFORMATIVE.some((pattern) => pattern.test(line))) {
      // "[tls @ 0x55d0...] Peer certificate failed verification" -> "tls: Peer certificate ..."
      this.reasons.push(line.trim().replace(/^\[(\w+) @ 0x[0-9a-f]+\] /, '$1: '));
      if (this.reasons.length > 3) this.reasons.shift();
    }
    if (/does not contain any stream/.test(line)) this.emptyOutput = true;

    const header = /^(Input|Output) #\d+, .*?, (?:from|to) '(.*)':$/.exec(line);
    if (header) {
      this.section = header[1] === 'Input' ? 'input' : 'output';
      this.outputPipe = header[2] ?? '';
      return false;
    }
    if (/^Stream mapping:/.test(line)) {
      this.section = 'none';
      const first = !this.mappingSeen;
      this.mappingSeen = true;
      return first;
    }
    const stream = parseStreamLine(line);
    if (!stream) return false;
    if (this.section === 'input' && stream.file === 0) this.inputStreams.push(stream);
    if (this.section === 'output' && stream.kind === 'video' && /^pipe:/.test(this.outputPipe)) {
      if (stream.width !== undefined && stream.height !== undefined) {
        this.videoOutputSize = { width: stream.width, height: stream.height };
      }
    }
    return false;
  }

  get inputDescribed(): boolean {
    return this.inputStreams.length > 0;
  }

  input(): InputStreams {
    const video = this.inputStreams.find((s) => s.kind === 'video');
    return {
      hasVideo: video !== undefined,
      hasAudio: this.inputStreams.some((s) => s.kind === 'audio'),
      width: video?.width ?? 0,
      height: video?.height ?? 0,
    };
  }

  get reason(): string {
    return this.reasons.join('; ');
  }
}
