// An actor: an object with a mailbox that handles one message at a time, in arrival order.
// Handlers may be async; the next message waits until the previous handler has finished, so
// an actor's state is never touched by two handlers at once.
import type { Logger } from '../bus/log.ts';

export abstract class Actor<Message> {
  private readonly mailbox: Message[] = [];
  private draining = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => {};

  constructor(protected readonly log: Logger) {}

  send(message: Message): void {
    this.mailbox.push(message);
    if (!this.draining) this.drain();
  }

  /** Resolves once every message sent so far has been handled. */
  settled(): Promise<void> {
    return this.draining ? this.idle : Promise.resolve();
  }

  protected abstract handle(message: Message): Promise<void> | void;

  private drain(): void {
    this.draining = true;
    this.idle = new Promise((resolve) => (this.markIdle = resolve));
    void (async () => {
      while (this.mailbox.length) {
        const message = this.mailbox.shift() as Message;
        try {
          await this.handle(message);
        } catch (error) {
          this.log.error({ err: error, message }, 'actor failed to handle a message');
        }
      }
      this.draining = false;
      this.markIdle();
    })();
  }
}
