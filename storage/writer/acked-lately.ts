// The ROWS messages this writer stored and acknowledged lately, by their publisher's message id.
// An acknowledgement is sent once and never confirmed: one sent as NATS went away (a restart, a
// connection moving) is lost, and the server delivers the message again after its ack_wait, to
// this writer or another. And a publish whose acknowledgement the host lost as NATS stopped is
// published again once NATS is back, where the server may take it a second time: ROWS is a work
// queue, its stored and consumed messages are gone, and a restarted server rebuilds its
// duplicate window only from the messages it still holds (nats-server#3272). Plain MergeTree
// would keep the second insert as a second copy, so a message whose id this writer already
// stored is acknowledged again instead of inserted. A copy that reaches another writer is still
// stored twice and collapses for readers (FINAL).
export class AckedLately {
  private readonly ids = new Set<string>();

  /** `limit`: ids kept, oldest forgotten first; far more than arrive within an ack_wait. */
  constructor(private readonly limit = 200_000) {}

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value as string);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}
