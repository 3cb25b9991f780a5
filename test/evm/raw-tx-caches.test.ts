import { RLP } from '@ethereumjs/rlp';
import { type TypedTransaction, type TypedTxData, createTx, createTxFromRLP } from '@ethereumjs/tx';
import test from 'ava';
import { PARAMS_LOADED, chainCommon, evmToSignedTransaction } from '../../ts/execution/index.js';
import { decodeRawFields, fillCachesFromRaw } from '../../ts/execution/raw-tx.js';
import { keccak256 } from '../../ts/crypto/index.js';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';

const common = chainCommon(7120, 'prague');
const keys = Array.from({ length: 4 }, () => randomKeyPair());

/** A deterministic pseudo-random generator (xorshift32), so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

function bytes(n: number, r: () => number): Uint8Array {
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

const DATA_LENGTHS = [0, 1, 1, 2, 20, 55, 56, 57, 255, 256, 300, 5000];
const BIG_VALUES = [0n, 1n, 127n, 128n, 255n, 256n, 10n ** 18n, 2n ** 64n - 1n, 2n ** 200n];

/** A signed transaction of type 0 (EIP-155), 1 or 2 with fields chosen to reach every RLP length form. */
function randomTx(i: number): TypedTransaction {
  const r = rng(i + 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const type = i % 3;
  const dataLen = pick(DATA_LENGTHS);
  const data = bytes(dataLen, r);
  if (dataLen === 1 && i % 2 === 0) data[0] = Math.floor(r() * 128); // a single byte below 0x80 is its own encoding
  const to = r() < 0.15 ? undefined : i % 5 === 0 ? new Uint8Array([0, 0, ...bytes(18, r)]) : bytes(20, r);
  const accessList =
    type === 0 || r() < 0.4
      ? []
      : Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
          address: toHex(bytes(20, r)).replace(/^/, '0x'),
          storageKeys: Array.from({ length: Math.floor(r() * 3) }, () => `0x${toHex(bytes(32, r))}`),
        }));
  const fee = pick([1n, 7n, 10n ** 9n, 10n ** 12n]);
  const fields: TypedTxData = {
    type,
    nonce: pick([0n, 1n, 127n, 128n, 2n ** 32n, 2n ** 63n]),
    gasLimit: pick([21_000n, 100_000n, 16_000_000n]),
    to: to === undefined ? undefined : `0x${toHex(to)}`,
    value: pick(BIG_VALUES),
    data,
    ...(type === 2 ? { maxFeePerGas: fee * 2n, maxPriorityFeePerGas: fee } : { gasPrice: fee }),
    ...(type === 0 ? {} : { accessList }),
  } as TypedTxData;
  return createTx(fields, { common }).sign(keys[i % keys.length].privateKey);
}

const decode = (raw: Uint8Array): TypedTransaction => createTxFromRLP(raw, { common, params: PARAMS_LOADED });
const cacheOf = (t: TypedTransaction) => t.cache as { hash?: Uint8Array; senderPubKey?: Uint8Array };

test('hash and sender from the raw bytes equal @ethereumjs own (legacy EIP-155, 2930, 1559; every RLP length form)', (t) => {
  for (let i = 0; i < 600; i++) {
    const raw = randomTx(i).serialize();
    const reference = decode(raw);
    // As admission does: the raw decoder, then the hashes from the same bytes (the fields read once).
    const bytes = Buffer.from(raw);
    const fast = i % 2 === 0 ? (decodeRawFields(bytes, { common, params: PARAMS_LOADED }) as TypedTransaction) : decode(raw);
    fillCachesFromRaw(fast, bytes);
    const label = `case ${i} (type ${reference.type}, ${reference.data.length} data bytes)`;
    t.truthy(cacheOf(fast).hash, `${label}: hash from the raw bytes`);
    t.truthy(cacheOf(fast).senderPubKey, `${label}: sender recovered`);
    t.deepEqual(fast.hash(), reference.hash(), label);
    t.deepEqual(fast.getSenderPublicKey(), reference.getSenderPublicKey(), label);
    t.deepEqual(fast.getSenderAddress().toString(), reference.getSenderAddress().toString(), label);
  }
});

test('a chain id with a leading zero (accepted by @ethereumjs, re-encoded by it) keeps @ethereumjs own hashes', (t) => {
  const tx = randomTx(2); // type 2
  t.is(tx.type, 2);
  const fields = RLP.decode(tx.serialize().subarray(1)) as Uint8Array[];
  fields[0] = new Uint8Array([0, ...fields[0]]);
  const raw = new Uint8Array([2, ...RLP.encode(fields)]);
  const reference = decode(raw);
  const fast = decode(raw);
  fillCachesFromRaw(fast, raw);
  t.is(cacheOf(fast).hash, undefined);
  t.is(cacheOf(fast).senderPubKey, undefined);
  const a = evmToSignedTransaction(reference, raw, 0);
  const b = evmToSignedTransaction(decode(raw), raw, 0);
  t.is(b.txid, a.txid);
  t.is(b.from_address, a.from_address);
  // @ethereumjs hashes its own (canonical) serialization, not these bytes: keccak(raw) would be another txid
  t.is(a.txid, toHex(tx.hash()));
  t.not(a.txid, toHex(keccak256(raw)));
});

test('a damaged signature gives the same sender or the same refusal as @ethereumjs', (t) => {
  for (let i = 0; i < 60; i++) {
    const tx = randomTx(i);
    const raw = tx.serialize();
    // Flip a bit of r (the second-to-last 32-byte field ends 33 bytes before the end: s is the last 33 bytes).
    const bad = raw.slice();
    bad[bad.length - 40] ^= 1 << (i % 8);
    const reference = decode(bad);
    const fast = decode(bad);
    fillCachesFromRaw(fast, bad);
    let expected: string;
    try {
      expected = reference.getSenderAddress().toString();
    } catch (err) {
      expected = `throws ${(err as Error).message}`;
    }
    let got: string;
    try {
      got = fast.getSenderAddress().toString();
    } catch (err) {
      got = `throws ${(err as Error).message}`;
    }
    t.is(got, expected, `case ${i}`);
    t.deepEqual(fast.hash(), reference.hash());
  }
});

/** What decoding gives: the transaction's JSON and serialization, or the error message. */
function outcome(decodeWith: () => TypedTransaction | null): string {
  try {
    const tx = decodeWith();
    if (tx === null) return 'null';
    return JSON.stringify({ json: tx.toJSON(), bytes: toHex(tx.serialize()), frozen: Object.isFrozen(tx) });
  } catch (err) {
    return `throws ${(err as Error).message}`;
  }
}

test('the raw decoder gives what createTxFromRLP gives, or hands the bytes to it (valid, damaged, truncated)', (t) => {
  const opts = { common, params: PARAMS_LOADED };
  let fast = 0;
  for (let i = 0; i < 300; i++) {
    const raw = Buffer.from(randomTx(i).serialize());
    const r = rng(1000 + i);
    const cases: Buffer[] = [raw, raw.subarray(0, raw.length - 1), Buffer.concat([raw, Buffer.from([0])])];
    for (let k = 0; k < 6; k++) {
      const bad = Buffer.from(raw);
      bad[Math.floor(r() * Math.min(bad.length, 40))] = Math.floor(r() * 256);
      cases.push(bad);
    }
    for (const bytes of cases) {
      const reference = outcome(() => createTxFromRLP(bytes, opts));
      const got = outcome(() => decodeRawFields(bytes, opts) ?? createTxFromRLP(bytes, opts));
      t.is(got, reference, `case ${i}: ${toHex(bytes)}`);
      if (outcome(() => decodeRawFields(bytes, opts)) !== 'null') fast++;
    }
  }
  t.true(fast >= 300, `the raw decoder took ${fast} cases itself`);
});
