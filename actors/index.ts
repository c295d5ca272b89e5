// The actor host as code outside the service uses it (the lab in ops/bench): rows published
// as a host publishes them. Each analysis has an entry point of its own (face/, voice/,
// speech/, models/, ingest/).
export { RowPublisher } from './rows.ts';
