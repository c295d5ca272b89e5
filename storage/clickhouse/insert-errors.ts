// Telling a row ClickHouse will never take from a ClickHouse that cannot take anything now.
// The first kind of failure is split down to the row and set aside; the second is retried
// with the whole batch waiting in the stream. A shard out of reach is the second kind.

// ClickHouse error codes that are about the data sent: parsing, types, ranges, unknown fields.
const DATA_ERRORS = new Set([6, 25, 26, 27, 32, 33, 38, 41, 53, 69, 70, 72, 117, 131, 321, 349]);

/** The ClickHouse error code (18.16 reports it only in the message text), if the server answered. */
export function clickhouseCode(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = Number((error as { code?: unknown }).code);
  if (Number.isInteger(code) && code > 0) return code;
  const match = /^Code: (\d+)/.exec(error.message);
  return match ? Number(match[1]) : undefined;
}

// What a node answers when a server it forwards to (another shard of a Distributed table)
// cannot be reached: a socket timeout, a network error, every replica of a shard tried.
const SHARD_UNREACHABLE = new Set([209, 210, 279]);

// A server behind the node went away in the middle of its answer (killed, cut off): code 32,
// "Attempt to read after eof", which is also the code of a truncated insert body, told apart by
// the server it names.
const lostMidAnswer = (error: unknown) => clickhouseCode(error) === 32 && /while receiving packet from/.test((error as Error).message);

/** The node answered, but a shard behind it could not be reached, or went away while answering. */
export function isShardUnreachable(error: unknown): boolean {
  const code = clickhouseCode(error);
  return code !== undefined && (SHARD_UNREACHABLE.has(code) || lostMidAnswer(error));
}

export function isDataError(error: unknown): boolean {
  const code = clickhouseCode(error);
  return code !== undefined && DATA_ERRORS.has(code) && !lostMidAnswer(error);
}

// ClickHouse wrote the block on a replica but lost ZooKeeper while registering it, and cannot
// tell whether it did: code 319, "Unknown status, client must retry". The retry is recognised if
// the registration landed; if not, the replica keeps the first copy, unknown to ZooKeeper, until
// its part check removes it five minutes later (or the server restarts).
const UNKNOWN_STATUS_OF_INSERT = 319;

export function isUnknownStatus(error: unknown): boolean {
  return clickhouseCode(error) === UNKNOWN_STATUS_OF_INSERT;
}
