// A session's lease must outlast a heartbeat lost with its connection and the retry a beat later:
// a takeover period shorter than three heartbeats stops the process at start.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readConfig } from '../../bus/config.ts';

test('the defaults hold three heartbeats in the takeover period', () => {
  const { heartbeatSeconds, takeoverSeconds } = readConfig({});
  assert.ok(takeoverSeconds >= 3 * heartbeatSeconds);
});

test('a takeover period shorter than three heartbeats is refused, naming the variable', () => {
  assert.throws(() => readConfig({ HEARTBEAT_SECONDS: '4', TAKEOVER_SECONDS: '10' }), /TAKEOVER_SECONDS must be a number >= 12/);
  assert.not.throws(() => readConfig({ HEARTBEAT_SECONDS: '4', TAKEOVER_SECONDS: '12' }));
  assert.throws(() => readConfig({ TAKEOVER_SECONDS: '5' }), /TAKEOVER_SECONDS/);
});

test.run();
