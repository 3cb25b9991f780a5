import test from 'ava';
import { RawJson, parseJsonExact, stringifyExact } from '../../ts/util/json.js';

test('parseJsonExact: integers past 2^53 become bigint wherever a number can stand', (t) => {
  const big = 12345678901234567890n;
  t.is(parseJsonExact(`${big}`), big);
  t.is(parseJsonExact(` -${big}`), -big);
  t.deepEqual(parseJsonExact(`{"a":${big}}`), { a: big });
  t.deepEqual(parseJsonExact(`{"a": \n ${big}}`), { a: big });
  t.deepEqual(parseJsonExact(`[1,${big}]`), [1, big]);
  t.deepEqual(parseJsonExact(`[ ${big} ]`), [big]);
  // 15 digits and below stay numbers.
  t.deepEqual(parseJsonExact('{"a":999999999999999}'), { a: 999999999999999 });
});

test('parseJsonExact: digit runs inside strings are text, not numbers', (t) => {
  const hex = `0x${'1234567890'.repeat(4)}`;
  t.deepEqual(parseJsonExact(`{"sig":"${hex}","n":7}`), { sig: hex, n: 7 });
  // A string that looks like "key: <long number>" takes the exact parser: same result.
  t.deepEqual(parseJsonExact('{"note":"x: 12345678901234567890"}'), { note: 'x: 12345678901234567890' });
  t.is(stringifyExact(parseJsonExact('{"v":123456789012345678901}')), '{"v":123456789012345678901}');
});

test('stringifyExact: bigints exact at the top and nested, RawJson verbatim; errors keep their kind and stack', (t) => {
  const limit = Error.stackTraceLimit;
  const big = 10n ** 22n;
  t.is(stringifyExact({ address: '0xab', balance: big }), `{"address":"0xab","balance":${big}}`);
  t.is(stringifyExact({ tx: { amount: big, fee: 1n }, n: 2 }), `{"tx":{"amount":${big},"fee":1},"n":2}`);
  t.is(stringifyExact([big, { v: -big }]), `[${big},{"v":${-big}}]`);
  t.is(stringifyExact({ a: 1, b: ['x'] }), '{"a":1,"b":["x"]}');
  t.is(stringifyExact({ logs: new RawJson('[{"pc":0}]'), gas: big }), `{"logs":[{"pc":0}],"gas":${big}}`);
  t.is(stringifyExact({ logs: new RawJson('[]') }), '{"logs":[]}');
  t.is(Error.stackTraceLimit, limit);
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  t.throws(() => stringifyExact(circular), { instanceOf: TypeError });
  const failing = {
    toJSON() {
      throw new RangeError('toJSON failed');
    },
  };
  const err = t.throws(() => stringifyExact({ v: failing }), { instanceOf: RangeError });
  t.true((err?.stack ?? '').includes('toJSON'));
  t.is(Error.stackTraceLimit, limit);
});
