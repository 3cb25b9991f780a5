import { randomBytes } from 'node:crypto';
import { RLP } from '@ethereumjs/rlp';
import test from 'ava';
import { MAX_RLP_DEPTH, RlpDecodeError, checkRlp, decodeRlp } from '../../ts/util/rlp-bounded.js';
import { nestedLists } from '../helpers/hostile-rlp.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const toHexTree = (x: unknown): unknown => (x instanceof Uint8Array ? hex(x) : (x as unknown[]).map(toHexTree));

test('decodes what @ethereumjs/rlp encodes, to the same values, for every length class', (t) => {
  const values = [
    new Uint8Array(0),
    Uint8Array.of(0),
    Uint8Array.of(0x7f),
    Uint8Array.of(0x80),
    randomBytes(55),
    randomBytes(56),
    randomBytes(300),
    randomBytes(70_000),
    [],
    [randomBytes(3), [randomBytes(60), []], Array.from({ length: 40 }, () => randomBytes(20))],
    [[[Array.from({ length: 3 }, () => randomBytes(32))]]],
  ];
  for (const v of values) {
    const enc = RLP.encode(v as never);
    t.deepEqual(toHexTree(decodeRlp(enc)), toHexTree(RLP.decode(enc)), hex(enc).slice(0, 40));
    t.notThrows(() => checkRlp(enc));
  }
});

test('byte strings are views into the input, not copies', (t) => {
  const enc = RLP.encode([randomBytes(100), randomBytes(5)]);
  const [a, b] = decodeRlp(enc) as Uint8Array[];
  t.is(a.buffer, enc.buffer);
  t.is(b.buffer, enc.buffer);
});

test('non-canonical and malformed encodings are refused', (t) => {
  const bad: [string, number[]][] = [
    ['a single byte below 0x80 in the long form', [0x81, 0x05]],
    ['a long form for 3 bytes', [0xb8, 0x03, 1, 2, 3]],
    ['a length with a leading zero', [0xb9, 0x00, 0x40, ...new Array(0x40).fill(1)]],
    ['a list in the long form for 1 byte', [0xf8, 0x01, 0x01]],
    ['trailing bytes', [0x01, 0x02]],
    ['a string running past the end', [0x83, 1, 2]],
    ['a list item running past its list', [0xc2, 0x83, 1, 2, 3]],
    ['a 5-byte length', [0xbc, 1, 0, 0, 0, 0]],
    ['a truncated length', [0xb9, 0x01]],
  ];
  for (const [what, bytes] of bad) {
    t.throws(() => decodeRlp(Uint8Array.from(bytes)), { instanceOf: RlpDecodeError }, what);
    t.throws(() => checkRlp(Uint8Array.from(bytes)), { instanceOf: RlpDecodeError }, what);
  }
});

test('nesting is limited: MAX_RLP_DEPTH levels decode, one more is refused', (t) => {
  t.notThrows(() => decodeRlp(nestedLists(MAX_RLP_DEPTH)));
  t.throws(() => decodeRlp(nestedLists(MAX_RLP_DEPTH + 1)), { instanceOf: RlpDecodeError, message: /nested deeper/ });
  t.throws(() => checkRlp(nestedLists(MAX_RLP_DEPTH + 1)), { instanceOf: RlpDecodeError });
  t.notThrows(() => decodeRlp(nestedLists(12), 12));
});

test('100,000 nested lists (~378 KB) are refused in well under a millisecond per KB, with no memory growth', (t) => {
  const hostile = nestedLists(100_000);
  t.true(hostile.length > 370_000 && hostile.length < 400_000, `${hostile.length} bytes`);
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  for (let i = 0; i < 1000; i++) t.throws(() => decodeRlp(hostile), { instanceOf: RlpDecodeError });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const grown = process.memoryUsage().heapUsed - heapBefore;
  t.log(`1000 refusals in ${ms.toFixed(1)} ms, heap +${(grown / 1e6).toFixed(1)} MB`);
  // @ethereumjs/rlp took 7-9 s and ~3 GB for one; the bound refuses at the fifth level.
  t.true(ms < 2000, `${ms} ms for 1000 refusals`);
  t.true(grown < 32e6, `heap grew ${grown} bytes`);
});

test('the cost of a wide malformed message is linear in its size', (t) => {
  // 1 MiB of single-byte items in one list, then a truncated item: every item is read before the refusal.
  const body = new Uint8Array(1 << 20).fill(0x01);
  const list = Uint8Array.from([0xfa, 0x10, 0x00, 0x01, ...body.subarray(0, 16), 0x83]);
  const wide = new Uint8Array(4 + (1 << 20) + 1);
  wide.set([0xfa, 0x10, 0x00, 0x01], 0);
  wide.set(body, 4);
  wide[wide.length - 1] = 0x83;
  t.throws(() => checkRlp(list), { instanceOf: RlpDecodeError });
  const started = process.hrtime.bigint();
  t.throws(() => checkRlp(wide), { instanceOf: RlpDecodeError });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  t.true(ms < 500, `${ms} ms to walk 1 MiB`);
});
