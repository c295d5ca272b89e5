// A storage service started on a sessions bucket that holds no record although its stream has
// numbered some (an operator purged it, or every record outlived the bucket's age) answers
// lists at once. Its lists wait for its watch to deliver the bucket's latest revision, and no
// message holds that revision any more: they answered 503 until some session changed.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startServices } from '../../ops/support/services.ts';
import { SESSIONS_STREAM } from '../../storage/sessions/index-progress.ts';

const natsUrl = process.env.NATS_URL!;

test('lists answer at once after the sessions bucket was purged', async () => {
  const before = await startServices({ name: 'sessions-list-emptied-bucket' });
  try {
    const created = await before.api('POST', '/v1/sessions', { body: { name: 'purged', streamUri: 'rtmp://127.0.0.1:9/live/x' } });
    assert.is(created.status, 201, JSON.stringify(created.body));
  } finally {
    await before.stop();
  }

  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.purge(SESSIONS_STREAM);
    const { state } = await jsm.streams.info(SESSIONS_STREAM);
    assert.is(state.messages, 0);
    assert.ok(state.last_seq > 0, 'the purge kept the stream\'s sequence numbers');
  } finally {
    await nc.close();
  }

  const after = await startServices({ name: 'sessions-list-emptied-bucket-after' });
  try {
    const page = await after.api('GET', '/v1/sessions');
    assert.is(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.data, []);
    // A change made now is listed by the same service: its watch follows the bucket from here.
    const created = await after.api('POST', '/v1/sessions', { body: { name: 'after', streamUri: 'rtmp://127.0.0.1:9/live/x' } });
    assert.is(created.status, 201, JSON.stringify(created.body));
    assert.type(created.body._id, 'string');
    const listed = await after.api('GET', '/v1/sessions');
    assert.is(listed.status, 200, JSON.stringify(listed.body));
    assert.equal(listed.body.data.map((session: { _id: string }) => session._id), [created.body._id]);
  } finally {
    await after.stop();
  }
});

test.run();
