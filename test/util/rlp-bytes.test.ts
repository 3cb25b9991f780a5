import { randomBytes } from 'node:crypto';
import { RLP } from '@ethereumjs/rlp';
import test from 'ava';
import { rlpBytesList } from '../../ts/util/rlp-hex.js';

test('rlpBytesList is byte-identical to @ethereumjs/rlp for byte-string lists of every length class', (t) => {
  const lengths = [0, 1, 2, 54, 55, 56, 57, 255, 256, 1024, 70_000];
  const items: Uint8Array[] = [Uint8Array.of(0x00), Uint8Array.of(0x7f), Uint8Array.of(0x80), Uint8Array.of(0xff)];
  for (const n of lengths) items.push(randomBytes(n));
  t.deepEqual(Buffer.from(rlpBytesList(items)), Buffer.from(RLP.encode(items)));
  t.deepEqual(Buffer.from(rlpBytesList([])), Buffer.from(RLP.encode([])));
  // A list big enough for a 3-byte length (a block of many transactions), and the encoded tail form.
  const many = Array.from({ length: 20_000 }, (_, i) => randomBytes(100 + (i % 200)));
  t.deepEqual(Buffer.from(rlpBytesList(many)), Buffer.from(RLP.encode(many)));
  const head = [randomBytes(300), randomBytes(65), new Uint8Array(0)];
  t.deepEqual(Buffer.from(rlpBytesList(head, [rlpBytesList(many)])), Buffer.from(RLP.encode([...head, many])));
});
