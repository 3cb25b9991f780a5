/**
 * GetBalance's answer is written directly (shapes.ts encodeAccountAnswer) rather than through protobuf-es'
 * reflection: its bytes must be exactly what the schema's encoder makes of the same message, for every value
 * the wire can carry, and the schema's path (with its error) beyond.
 */
import { randomBytes } from 'node:crypto';
import { toBinary } from '@bufbuild/protobuf';
import test from 'ava';
import { AccountSchema } from '../../ts/grpc/gen/native/v1/native_pb.js';
import { accountMessage, encodeAccountAnswer } from '../../ts/grpc/shapes.js';
import type { AccountAt } from '../../ts/services/index.js';

const MAX_UINT64 = (1n << 64n) - 1n;
const WEI_PER_BASE = 10_000_000_000n;

const schemaBytes = (address: Uint8Array, a: AccountAt) =>
  Buffer.from(toBinary(AccountSchema, accountMessage(`0x${Buffer.from(address).toString('hex')}`, a)));

/** Edge values of a varint: zero, one byte, each length boundary, 2^32 (the number/bigint switch), 2^53, 2^64 - 1. */
const EDGES = [0n, 1n, 127n, 128n, 16_383n, 16_384n, 0xffff_ffffn, 0x1_0000_0000n, 2n ** 53n, 2n ** 63n, MAX_UINT64];

function randomUint(bits: number): bigint {
  return BigInt(`0x${randomBytes(8).toString('hex')}`) >> BigInt(64 - bits);
}

test('encodeAccountAnswer writes the same bytes as the schema for edge and random values', (t) => {
  const cases: AccountAt[] = [];
  for (const v of EDGES) {
    cases.push({ balanceWei: v, nonce: 0n, pendingNonce: 0n, height: 0 });
    cases.push({ balanceWei: v * WEI_PER_BASE, nonce: v, pendingNonce: v, height: 1 });
    cases.push({ balanceWei: v * WEI_PER_BASE + 9_999_999_999n, nonce: 5n, pendingNonce: v, height: 2 ** 31 });
    cases.push({ balanceWei: 1n, nonce: v, pendingNonce: 0n, height: Number.MAX_SAFE_INTEGER });
  }
  for (let i = 0; i < 2000; i++) {
    cases.push({
      balanceWei: randomUint(1 + (i % 64)) * WEI_PER_BASE + randomUint(33) / 2n,
      nonce: randomUint(1 + ((i * 7) % 64)),
      pendingNonce: randomUint(1 + ((i * 13) % 64)),
      height: Number(randomUint(1 + (i % 53))),
    });
  }
  for (const a of cases) {
    const address = randomBytes(20);
    const fast = Buffer.from(encodeAccountAnswer(address, a));
    const expected = schemaBytes(address, a);
    if (!fast.equals(expected)) {
      t.fail(`differs for ${JSON.stringify(a, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      return;
    }
  }
  t.pass();
});

test('encodeAccountAnswer: values beyond uint64 take the schema path and fail as it does', (t) => {
  const address = randomBytes(20);
  const tooLarge: AccountAt = { balanceWei: 0n, nonce: MAX_UINT64 + 1n, pendingNonce: 0n, height: 1 };
  const schemaError = t.throws(() => schemaBytes(address, tooLarge));
  const fastError = t.throws(() => encodeAccountAnswer(address, tooLarge));
  t.is(fastError?.message, schemaError?.message);
  // The largest balance the wire carries in base units is still written directly.
  const largest: AccountAt = { balanceWei: MAX_UINT64 * WEI_PER_BASE, nonce: 1n, pendingNonce: 2n, height: 3 };
  t.deepEqual(Buffer.from(encodeAccountAnswer(address, largest)), schemaBytes(address, largest));
});
