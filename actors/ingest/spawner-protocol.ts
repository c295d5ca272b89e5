// The messages between an actor host and its decoder spawner (spawner-process.ts), over the
// IPC channel of the spawner's fork. The host asks for a process and for signals; the spawner
// answers with what the process did. Media never comes this way: ffmpeg writes it to unix
// sockets the host listens on (media-socket.ts); only ffprobe's JSON, stderr text and the
// process's fate do.

/** Host to spawner. */
export type SpawnerRequest =
  | {
      type: 'start';
      id: number;
      file: string;
      args: string[];
      /** The process's whole environment. */
      env: Record<string, string>;
      /** Relay stdout (ffprobe's description); otherwise it goes nowhere. */
      stdout: boolean;
    }
  | { type: 'kill'; id: number; signal: 'SIGTERM' | 'SIGKILL' };

/** Spawner to host. `exit` is the last message about a process: its stdout and stderr have all come before it. */
export type SpawnerReport =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'stdout'; id: number; text: string }
  | { type: 'stderr'; id: number; text: string }
  | { type: 'error'; id: number; message: string }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };
