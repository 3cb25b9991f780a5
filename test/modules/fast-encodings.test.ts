/**
 * The number fast paths of the hot state encoders write the same bytes as the plain bigint buffer
 * writes they short-cut, on both sides of every boundary (2^32, 2^53, 2^64, 2^128), and still refuse
 * what those refuse.
 */
import test from 'ava';
import { u64s } from '../../ts/modules/nft/keys.js';
import {
  decodeCounters,
  decodeToken,
  encodeCounters,
  encodeToken,
  tokenOwnedBy,
  tokenOwner,
} from '../../ts/modules/nft/records.js';
import { decodeU128, encodeU128 } from '../../ts/modules/index.js';

const EDGES = [0n, 1n, 255n, 256n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n];

function u64Reference(n: bigint): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b.toString('latin1');
}

function u128Reference(n: bigint): Buffer {
  const b = Buffer.alloc(16);
  b.writeBigUInt64BE(n >> 64n, 0);
  b.writeBigUInt64BE(n & 0xffffffffffffffffn, 8);
  return b;
}

test('u64s (token id key part) equals the 8-byte big-endian write for bigints and numbers', (t) => {
  const values = [...EDGES];
  for (let i = 0n; i < 2000n; i++) values.push(i * 7_919n * 1_000_003n);
  for (const n of values) {
    t.is(u64s(n), u64Reference(n), `bigint ${n}`);
    if (n <= 2n ** 53n) t.is(u64s(Number(n)), u64Reference(n), `number ${n}`);
  }
  t.throws(() => u64s(-1n));
  t.throws(() => u64s(2n ** 64n));
});

test('encodeU128 (token balances, allowances) equals the two 64-bit writes and round-trips', (t) => {
  const values = [...EDGES, 2n ** 64n, 2n ** 127n, 2n ** 128n - 1n, 10n ** 18n, 123_456_789n * 10n ** 18n];
  for (const n of values) {
    t.deepEqual(encodeU128(n), u128Reference(n), `${n}`);
    t.is(decodeU128(encodeU128(n)), n);
  }
  t.throws(() => encodeU128(-1n));
});

test('NFT counters and token records with u64 fields at the boundaries round-trip', (t) => {
  for (const n of EDGES) {
    const c = { totalMinted: n, totalBurned: n, autoCursor: n, index: 3 };
    t.deepEqual(decodeCounters(encodeCounters(c)), c);
    const b = encodeCounters(c);
    t.is(b.readBigUInt64BE(0), n);
    t.is(b.readBigUInt64BE(16), n);
    const tok = {
      owner: 'o'.repeat(20),
      mintedHeight: 5,
      lastTransferHeight: 9,
      burned: false,
      spender: 's'.repeat(20),
      expiry: n,
      uri: null,
    };
    t.deepEqual(decodeToken(encodeToken(tok)), tok);
    t.is(encodeToken(tok).readBigUInt64BE(57), n);
  }
  t.throws(() => encodeCounters({ totalMinted: -1n, totalBurned: 0n, autoCursor: 1n, index: 0 }));
});

test('tokenOwnedBy compares the owner in place as tokenOwner would', (t) => {
  const owner = Buffer.from('ff00'.repeat(5) + '7f80'.repeat(5), 'hex').toString('latin1');
  const rec = encodeToken({ owner, mintedHeight: 1, lastTransferHeight: 1, burned: false, spender: null, expiry: 0n, uri: 'x' });
  t.true(tokenOwnedBy(rec, owner));
  t.is(tokenOwner(rec), owner);
  for (let i = 0; i < 20; i++) {
    const other = owner.slice(0, i) + String.fromCharCode((owner.charCodeAt(i) + 1) % 256) + owner.slice(i + 1);
    t.false(tokenOwnedBy(rec, other));
  }
});
