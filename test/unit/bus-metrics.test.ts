// The operational endpoints and the pure parts of the metrics: readiness as the process moves
// from starting to serving to stopping, the labels of a REST request, the writer's lag, and
// the exposition reader the integration tests use.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { Counter } from 'prom-client';
import { createRegistry, MetricsServer } from '../../bus/metrics-server.ts';
import { requestLabels, UNMATCHED } from '../../gateway/middleware/http-metrics.ts';
import { writerLagSeconds } from '../../storage/metrics.ts';
import { parsePrometheusText, total } from '../../ops/support/prometheus-text.ts';
import { httpRequest } from '../../ops/stack/http-client.ts';

const quiet = pino({ level: 'silent' });

test('readyz answers 503 until ready and again once stopping; livez and metrics answer throughout', async () => {
  const registry = createRegistry();
  new Counter({ name: 'emo_test_things_total', help: 'things', labelNames: ['kind'], registers: [registry] }).inc({ kind: 'a "quoted"\\one' }, 3);
  const server = await MetricsServer.start(registry, { metricsHost: '127.0.0.1', metricsPort: 0 }, quiet);
  try {
    const status = async (path: string) => (await httpRequest(server.url + path)).status;
    assert.is(await status('/livez'), 200);
    assert.is(await status('/readyz'), 503);
    server.markReady();
    assert.is(await status('/readyz'), 200);
    const response = await httpRequest(`${server.url}/metrics`);
    assert.is(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheusText(response.text);
    assert.is(total(samples, 'emo_test_things_total', { kind: 'a "quoted"\\one' }), 3);
    assert.ok((total(samples, 'process_cpu_user_seconds_total') ?? -1) >= 0, 'default process metrics are on the registry');
    server.markStopping();
    assert.is(await status('/readyz'), 503);
    assert.is(await status('/livez'), 200);
    assert.is(await status('/nothing'), 404);
    assert.is((await httpRequest(`${server.url}/metrics`, { method: 'POST' })).status, 405);
  } finally {
    await server.close();
  }
});

test('a REST request is labelled by its route pattern, with few values whatever the client sent', () => {
  assert.equal(requestLabels('GET', '/v1/sessions/:sessionId', 404), { method: 'GET', route: '/v1/sessions/:sessionId', status: '404' });
  assert.equal(requestLabels('PROPFIND', undefined, 405), { method: 'other', route: UNMATCHED, status: '405' });
  assert.is(requestLabels('GET', /regexp/, 200).route, UNMATCHED);
});

test('writer lag is the age of the oldest row in ROWS, 0 when it is empty', () => {
  const now = Date.parse('2026-01-01T00:00:10.500Z');
  assert.is(writerLagSeconds({ messages: 3, first_ts: '2026-01-01T00:00:00Z' }, now), 10.5);
  assert.is(writerLagSeconds({ messages: 0, first_ts: '2026-01-01T00:00:00Z' }, now), 0);
  assert.is(writerLagSeconds({ messages: 1, first_ts: '2026-01-01T00:00:11Z' }, now), 0, 'clock skew never makes it negative');
});

test('the exposition reader reads names, labels, escapes and special values', () => {
  const samples = parsePrometheusText([
    '# HELP a_total things',
    '# TYPE a_total counter',
    'a_total{x="1",y="q\\"uote\\\\d\\n"} 2',
    'a_total{x="2"} 3 1700000000000',
    'b Nan',
    'c_bucket{le="+Inf"} +Inf',
    '',
  ].join('\n'));
  assert.equal(samples[0], { name: 'a_total', labels: { x: '1', y: 'q"uote\\d\n' }, value: 2 });
  assert.is(total(samples, 'a_total'), 5);
  assert.is(total(samples, 'a_total', { x: '2' }), 3);
  assert.is(total(samples, 'missing'), undefined);
  assert.ok(Number.isNaN(samples[2]!.value));
  assert.is(samples[3]!.labels.le, '+Inf');
  assert.is(samples[3]!.value, Infinity);
});

test.run();
