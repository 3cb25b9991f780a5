import test from 'ava';
import { DEFAULT_TRACE_OPTIONS, TRACE_TIMEOUT_MAX_MS } from '../../ts/execution/index.js';
import { parseGoDuration, parseTraceOptions } from '../../ts/rpc/debug.js';
import { RawJson, stringifyExact } from '../../ts/util/index.js';

test('Go durations: units, fractions and sums; anything else is invalid params', (t) => {
  t.is(parseGoDuration('500ms'), 500);
  t.is(parseGoDuration('1.5s'), 1500);
  t.is(parseGoDuration('1m30s'), 90_000);
  t.is(parseGoDuration('250000us'), 250);
  for (const bad of ['10', '10 s', 's', '-1s', '1d']) {
    t.throws(() => parseGoDuration(bad), { message: 'invalid params' }, bad);
  }
});

test('trace options: defaults, memory switches, timeout maximum, tracer configs', (t) => {
  t.deepEqual(parseTraceOptions(undefined), DEFAULT_TRACE_OPTIONS);
  t.true(parseTraceOptions({}).enableMemory);
  t.false(parseTraceOptions({ disableMemory: true }).enableMemory);
  t.true(parseTraceOptions({ disableMemory: true, enableMemory: true }).enableMemory);
  t.is(parseTraceOptions({ timeout: '2m' }).timeoutMs, TRACE_TIMEOUT_MAX_MS);
  t.is(parseTraceOptions({ timeout: '100ms' }).timeoutMs, 100);
  t.like(parseTraceOptions({ tracer: 'callTracer', tracerConfig: { onlyTopCall: true, withLog: true } }), {
    tracer: 'callTracer',
    onlyTopCall: true,
    withLog: true,
  });
  t.like(parseTraceOptions({ tracer: 'prestateTracer', tracerConfig: { diffMode: true } }), { diffMode: true });
  // geth's PrestateTracerConfig; its disableStorage is the prestate tracer's own, not the struct logger's.
  t.like(
    parseTraceOptions({
      tracer: 'prestateTracer',
      disableStorage: false,
      tracerConfig: { disableCode: true, disableStorage: true, includeEmpty: true },
    }),
    { disableCode: true, prestateDisableStorage: true, includeEmpty: true, disableStorage: false },
  );
  const invalid = { message: 'invalid params' };
  t.throws(() => parseTraceOptions({ tracer: 'prestateTracer', tracerConfig: { diffMode: true, includeEmpty: true } }), invalid);
  t.throws(() => parseTraceOptions({ tracer: 'prestateTracer', tracerConfig: { disableCode: 1 } }), invalid);
  t.throws(() => parseTraceOptions({ tracer: 'callTracer', tracerConfig: { includeEmpty: true } }), invalid);
  t.throws(() => parseTraceOptions([]), invalid);
  t.throws(() => parseTraceOptions({ tracer: 'js' }), invalid);
  t.throws(() => parseTraceOptions({ tracer: 'prestateTracer', tracerConfig: { withLog: true } }), invalid);
  t.throws(() => parseTraceOptions({ tracerConfig: 'x' }), invalid);
  t.throws(() => parseTraceOptions({ timeout: 5 }), invalid);
});

test('RawJson is written verbatim by stringifyExact, next to bigints', (t) => {
  const text = stringifyExact({ a: 1n << 70n, logs: new RawJson('[{"pc":0}]'), s: 'x' });
  t.is(text, `{"a":${1n << 70n},"logs":[{"pc":0}],"s":"x"}`);
  t.deepEqual(JSON.parse(stringifyExact([new RawJson('{"$&":"$1"}')])), [{ '$&': '$1' }]);
});
