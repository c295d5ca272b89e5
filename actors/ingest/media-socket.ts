// One of ffmpeg's outputs as the host reads it: a unix socket the host listens on, in its
// private directory (socket-dir.ts), that ffmpeg connects to (`unix:<path>`) and writes media
// to. The host reads it as it read a pipe: pausing it stalls ffmpeg's writes, which is how a
// stream that runs ahead of real time is held (ingest.ts). The first connection is ffmpeg's;
// the socket stops listening and its path is gone as soon as it is made, so nothing else can
// connect in its place.
import { createServer, type Server, type Socket } from 'node:net';

export class MediaSocket {
  private readonly server: Server;
  private socket: Socket | undefined;
  private paused = false;
  private listening = true;
  private readonly done: Promise<void>;
  private markDone!: () => void;

  /** Listens at `path` (which must not exist); `onData` is given what ffmpeg writes. */
  static async listen(path: string, onData: (chunk: Buffer) => void): Promise<MediaSocket> {
    const media = new MediaSocket(path, onData);
    await new Promise<void>((resolve, reject) => {
      media.server.once('error', reject);
      media.server.listen(path, () => {
        media.server.off('error', reject);
        resolve();
      });
    });
    return media;
  }

  private constructor(
    readonly path: string,
    private readonly onData: (chunk: Buffer) => void,
  ) {
    this.server = createServer((socket) => this.accept(socket));
    this.done = new Promise((resolve) => (this.markDone = resolve));
  }

  private accept(socket: Socket): void {
    if (this.socket) {
      socket.destroy();
      return;
    }
    this.socket = socket;
    this.stopListening();
    // A reset ends the media like an end of file: ffmpeg's exit says why.
    socket.on('error', () => {});
    socket.on('close', () => this.markDone());
    socket.on('data', this.onData);
    if (this.paused) socket.pause();
  }

  pause(): void {
    this.paused = true;
    this.socket?.pause();
  }

  resume(): void {
    this.paused = false;
    this.socket?.resume();
  }

  isPaused(): boolean {
    return this.paused;
  }

  /**
   * ffmpeg has exited: reads what it wrote to the end. Resolves once the connection has closed,
   * or at once if ffmpeg never connected.
   */
  drain(): Promise<void> {
    this.resume();
    if (!this.socket) {
      // A connection ffmpeg made just before it exited may wait in the backlog: the listening
      // socket was readable before the exit was reported, so it is accepted in this turn of
      // the event loop, before setImmediate's.
      setImmediate(() => {
        if (this.socket) return;
        this.stopListening();
        this.markDone();
      });
    }
    return this.done;
  }

  /** Drops the connection unread (its writer may be a decoder nobody can stop any more: it fails writing). */
  destroy(): void {
    this.stopListening();
    if (this.socket) this.socket.destroy();
    else this.markDone();
  }

  // Closing the listening socket removes its path.
  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.server.close();
  }
}
