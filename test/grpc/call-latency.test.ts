/**
 * The gRPC call latency histogram is kept in plain arrays (ts/grpc/call-latency.ts): /metrics must read the
 * same as prom-client's own Histogram fed the same observations (text and JSON), bounds included.
 */
import test from 'ava';
import { Histogram, Registry } from 'prom-client';
import { CallLatencyHistogram } from '../../ts/grpc/call-latency.js';
import { LATENCY_BUCKETS } from '../../ts/grpc/metrics.js';

const NAME = 'native_grpc_call_duration_seconds';
const HELP = 'Unary gRPC call time from request to answer, by method and transport';

test('reads as prom-client Histogram does for the same observations', async (t) => {
  const ours = new Registry();
  const theirs = new Registry();
  const fast = new CallLatencyHistogram(NAME, HELP, LATENCY_BUCKETS, ours);
  const reference = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'transport'],
    buckets: LATENCY_BUCKETS,
    registers: [theirs],
  });
  t.is(await ours.metrics(), await theirs.metrics(), 'nothing observed: no series');
  const series: [string, string][] = [
    ['GetBlock', 'grpc'],
    ['GetBalance', 'grpc-web'],
    ['GetBlock', 'grpc-web'],
  ];
  // Every bound exactly (le is inclusive), between bounds, beyond the last, and zero.
  const values = [0, ...LATENCY_BUCKETS, ...LATENCY_BUCKETS.map((b) => b * 1.5), 7.25, 0.000_012_3];
  series.forEach(([method, transport], k) => {
    const s = fast.labels(method, transport);
    const r = reference.labels(method, transport);
    values.slice(k).forEach((v) => {
      s.observe(v);
      r.observe(v);
    });
  });
  t.is(await ours.metrics(), await theirs.metrics());
  t.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
  ours.resetMetrics();
  theirs.resetMetrics();
  t.regex(await ours.metrics(), new RegExp(`${NAME}_count\\{method="GetBlock",transport="grpc"\\} 0`));
});
