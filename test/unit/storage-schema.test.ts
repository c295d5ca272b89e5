// Where the schema's statements go: an ALTER of a table holding rows is handed over as such
// (on a cluster it is sent to one replica of each shard), and only written ON CLUSTER when asked.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { alterQuery, Schema } from '../../storage/schema/schema.ts';
import { MIGRATIONS } from '../../storage/schema/migrations.ts';

const table = { name: 'audio_seconds', shardBy: 'cityHash64(session)' };

test('on one server a column change is one ALTER of the table itself', () => {
  const schema = new Schema('emotions');
  const [change, ...rest] = schema.alter(table, 'ADD COLUMN words UInt32');
  assert.equal(change, { database: 'emotions', table: 'audio_seconds', clause: 'ADD COLUMN words UInt32' });
  assert.equal(rest, []);
  assert.is(schema.onEveryNode(schema.deleteWhere('audio_seconds', "session = 'a'")), "ALTER TABLE emotions.audio_seconds DELETE WHERE session = 'a'");
});

test('on a cluster it changes the local tables, then makes the Distributed table again', () => {
  const schema = new Schema('emotions', 'emo');
  const [change, drop, create, ...rest] = schema.alter(table, 'ADD COLUMN words UInt32');
  assert.equal(change, { database: 'emotions', table: 'audio_seconds_local', clause: 'ADD COLUMN words UInt32' });
  assert.is(drop, 'DROP TABLE IF EXISTS emotions.audio_seconds ON CLUSTER emo');
  assert.match(String(create), /^CREATE TABLE IF NOT EXISTS emotions\.audio_seconds ON CLUSTER emo AS emotions\.audio_seconds_local\s+ENGINE = Distributed\(emo, emotions, audio_seconds_local, cityHash64\(session\)\)$/);
  assert.equal(rest, []);
});

test('on a cluster a deletion is of the local table, ON CLUSTER only when written for every node', () => {
  const schema = new Schema('emotions', 'emo');
  const deletion = schema.deleteWhere('video_seconds', "session = 'a'");
  assert.equal(deletion, { database: 'emotions', table: 'video_seconds_local', clause: "DELETE WHERE session = 'a'" });
  assert.is(schema.onEveryNode(deletion), "ALTER TABLE emotions.video_seconds_local ON CLUSTER emo DELETE WHERE session = 'a'");
  assert.is(alterQuery(deletion), "ALTER TABLE emotions.video_seconds_local DELETE WHERE session = 'a'", 'as sent to one replica of a shard');
});

test('the face effort column is added to video_seconds as the prosody columns were: the table, or its local tables and Distributed table', () => {
  const migration = MIGRATIONS.find((m) => m.id === 6)!;
  assert.equal(migration.statements(new Schema('emotions')), [
    { database: 'emotions', table: 'video_seconds', clause: 'ADD COLUMN effort UInt8' },
  ]);
  const [change, drop, create, ...rest] = migration.statements(new Schema('emotions', 'emo'));
  assert.equal(change, { database: 'emotions', table: 'video_seconds_local', clause: 'ADD COLUMN effort UInt8' });
  assert.is(drop, 'DROP TABLE IF EXISTS emotions.video_seconds ON CLUSTER emo');
  assert.match(String(create), /ENGINE = Distributed\(emo, emotions, video_seconds_local, cityHash64\(session\)\)$/);
  assert.equal(rest, []);
});

test("the segments' SNR estimate is added to speech_segments the same way, NULL on rows from before", () => {
  const migration = MIGRATIONS.find((m) => m.id === 7)!;
  assert.is(migration, MIGRATIONS.at(-1), 'the newest migration');
  assert.equal(migration.statements(new Schema('emotions')), [
    { database: 'emotions', table: 'speech_segments', clause: 'ADD COLUMN snr_db Nullable(Float32)' },
  ]);
  const [change, drop, create, ...rest] = migration.statements(new Schema('emotions', 'emo'));
  assert.equal(change, { database: 'emotions', table: 'speech_segments_local', clause: 'ADD COLUMN snr_db Nullable(Float32)' });
  assert.is(drop, 'DROP TABLE IF EXISTS emotions.speech_segments ON CLUSTER emo');
  assert.match(String(create), /ENGINE = Distributed\(emo, emotions, speech_segments_local, cityHash64\(session\)\)$/);
  assert.equal(rest, []);
});

test.run();
