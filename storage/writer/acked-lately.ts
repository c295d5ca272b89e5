// The ROWS messages this writer stored and acknowledged lately, by stream sequence. An
// acknowledgement is sent once and never confirmed: one sent as NATS went away (a restart, a
// connection moving) is lost, and the server delivers the message again after its ack_wait,
// to this writer or another. Plain MergeTree would keep the second insert as a second copy, so
// a message this writer already stored is acknowledged again instead of inserted. A redelivery
// to another writer (this one lost) is still stored twice and collapses for readers (FINAL).
export class AckedLately {
  private readonly sequences = new Set<number>();

  /** `limit`: sequences kept, oldest forgotten first; far more than arrive within an ack_wait. */
  constructor(private readonly limit = 200_000) {}

  add(sequence: number): void {
    this.sequences.add(sequence);
    if (this.sequences.size > this.limit) this.sequences.delete(this.sequences.values().next().value as number);
  }

  has(sequence: number): boolean {
    return this.sequences.has(sequence);
  }
}
