// Bus requests made while the event loop handles one round of I/O leave in one socket write.
// nats.js writes what it has queued once per microtask checkpoint, and Node runs a checkpoint
// after every I/O callback, so a gateway under load wrote to the NATS socket once per HTTP
// request, and those writes were its largest cost. Requests held until the loop's check phase
// (setImmediate) are sent together, in one synchronous run, so they share one write; the wait
// is at most the rest of the current round.
export class TurnBatch {
  private queued: (() => void)[] = [];

  /** Calls `send` in the loop's next check phase, with every other send of this round. */
  run<T>(send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push(() => {
        // A send that throws before it returns a promise fails its own caller, not the round.
        try {
          send().then(resolve, reject);
        } catch (error) {
          reject(error);
        }
      });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const queued = this.queued;
    this.queued = [];
    for (const send of queued) send();
  }
}
