import { secp256k1 } from '@noble/curves/secp256k1.js';
import test from 'ava';
import { jsBackend } from '../../ts/crypto/js.js';
import { fromHex as hexToBytes } from '../../ts/util/index.js';
import type { CryptoBackend } from '../../ts/crypto/types.js';
import { N, bytes, compactSig, flip, flipS, hex, makeSigned, nativeOrSkip, noteBackends } from './fixtures.js';

const signed = makeSigned(24);

function makeSignedDigest(digest: Uint8Array): { sig: Uint8Array; digest: Uint8Array; pubkey: Uint8Array } {
  const priv = bytes('big-digest-key', 32);
  return { sig: secp256k1.sign(digest, priv, { prehash: false }), digest, pubkey: secp256k1.getPublicKey(priv, false) };
}
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

/** [label, sig, digest, pubkey, expected] cases every backend must agree on. */
function verifyCases(): Array<[string, Uint8Array, Uint8Array, Uint8Array, boolean]> {
  const { sig, digest, pubkey } = signed[0];
  const other = signed[1].pubkey.every((b, i) => b === pubkey[i]) ? signed[2].pubkey : signed[1].pubkey;
  const hybrid = pubkey.slice();
  hybrid[0] = 6 + (pubkey[64] & 1);
  const compressed = new Uint8Array(33);
  compressed[0] = 2 + (pubkey[64] & 1);
  compressed.set(pubkey.subarray(1, 33), 1);
  const random65 = bytes('garbage-key', 65);
  random65[0] = 4;
  const r = BigInt(`0x${hex(sig.subarray(0, 32))}`);
  const s = BigInt(`0x${hex(sig.subarray(32))}`);
  return [
    ['valid', sig, digest, pubkey, true],
    ['high-S accepted', flipS(sig), digest, pubkey, true],
    ['tampered r', flip(sig, 5), digest, pubkey, false],
    ['tampered s', flip(sig, 40), digest, pubkey, false],
    ['tampered digest', sig, flip(digest, 31), pubkey, false],
    ['tampered pubkey (off curve)', sig, digest, flip(pubkey, 64), false],
    ['another key', sig, digest, other, false],
    ['hybrid 0x06/0x07 key', sig, digest, hybrid, false],
    ['compressed key', sig, digest, compressed, false],
    ['random 65-byte key', sig, digest, random65, false],
    ['all-zero key', sig, digest, new Uint8Array(65), false],
    ['empty key', sig, digest, new Uint8Array(0), false],
    ['short sig', sig.subarray(0, 63), digest, pubkey, false],
    ['long sig', new Uint8Array([...sig, 0]), digest, pubkey, false],
    ['short digest', sig, digest.subarray(0, 31), pubkey, false],
    ['long digest', sig, new Uint8Array([...digest, 0]), pubkey, false],
    ['r = 0', compactSig(0n, s), digest, pubkey, false],
    ['s = 0', compactSig(r, 0n), digest, pubkey, false],
    ['r = n', compactSig(N, s), digest, pubkey, false],
    ['s = n', compactSig(r, N), digest, pubkey, false],
    ['r, s = 2^256-1', new Uint8Array(64).fill(255), digest, pubkey, false],
    ['zero sig', new Uint8Array(64), digest, pubkey, false],
  ];
}

test('verify: valid, high-S, tampered and garbage inputs agree on every backend', (t) => {
  for (const b of noteBackends(t)) {
    for (const [label, sig, digest, pubkey, want] of verifyCases()) {
      t.is(b.verify(sig, digest, pubkey), want, `${b.name}: ${label}`);
    }
    // A digest >= n is reduced mod n by both (noble signs it the same way).
    const big = makeSignedDigest(new Uint8Array(32).fill(0xff));
    t.true(b.verify(big.sig, big.digest, big.pubkey), `${b.name}: digest >= n`);
    for (const x of signed) {
      t.true(b.verify(x.sig, x.digest, x.pubkey), `${b.name}: signed set`);
      t.true(b.verify(flipS(x.sig), x.digest, x.pubkey), `${b.name}: signed set high-S`);
    }
  }
});

test('verifyBatch of 200 signatures with a few bad ones', (t) => {
  const list = makeSigned(200, 'batch');
  const bad = new Set([0, 3, 50, 51, 120, 199]);
  const sigs = list.map((x, i) => (bad.has(i) ? flip(x.sig, 10) : i % 7 === 0 ? flipS(x.sig) : x.sig));
  const digests = list.map((x) => x.digest);
  const pubkeys = list.map((x, i) => (i === 77 ? new Uint8Array(65) : x.pubkey));
  bad.add(77);
  const want = list.map((_, i) => !bad.has(i));
  for (const b of noteBackends(t)) {
    t.deepEqual(b.verifyBatch(sigs, digests, pubkeys), want, b.name);
    t.deepEqual(b.verifyBatch([], [], []), [], `${b.name} empty`);
    t.deepEqual(b.verifyBatch(sigs.slice(0, 5), digests.slice(0, 5), pubkeys.slice(0, 5)), want.slice(0, 5), `${b.name} small`);
  }
});

test('verifyBatch equals verify item by item on garbage-heavy input', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  const cases = verifyCases();
  const reps = Array.from({ length: 10 }, () => cases).flat();
  const got = native.verifyBatch(
    reps.map((c) => c[1]),
    reps.map((c) => c[2]),
    reps.map((c) => c[3]),
  );
  t.deepEqual(
    got,
    reps.map((c) => jsBackend.verify(c[1], c[2], c[3])),
  );
});

function recoverAll(b: CryptoBackend, sig: Uint8Array, digest: Uint8Array): Array<string | null> {
  return [0, 1, 2, 3].map((recid) => hex(b.recover(sig, recid, digest)));
}

test('recover: the signing recid yields the key; all recids agree across backends', (t) => {
  const bs = noteBackends(t);
  for (const x of signed) {
    const highS = flipS(x.sig);
    for (const b of bs) {
      t.is(hex(b.recover(x.sig, x.recid, x.digest)), hex(x.pubkey), `${b.name} recid ${x.recid}`);
      t.is(hex(b.recover(highS, x.recid ^ 1, x.digest)), hex(x.pubkey), `${b.name} high-S, flipped recid`);
      const other = hex(b.recover(x.sig, x.recid ^ 1, x.digest));
      t.not(other, hex(x.pubkey), `${b.name} wrong parity gives another key`);
    }
    if (bs.length > 1) {
      t.deepEqual(recoverAll(bs[1], x.sig, x.digest), recoverAll(bs[0], x.sig, x.digest), 'recids 0..3');
      t.deepEqual(recoverAll(bs[1], highS, x.digest), recoverAll(bs[0], highS, x.digest), 'recids 0..3 high-S');
    }
  }
});

test('recover: edge and garbage inputs give null (or agree) on every backend', (t) => {
  const { sig, digest } = signed[0];
  const smallR = compactSig(1n, 1n); // r + n < p: recids 2 and 3 are possible in principle
  const bigR = compactSig(P - N, 5n); // r + n == p: recids 2/3 must fail
  const bs = noteBackends(t);
  for (const b of bs) {
    for (const recid of [-1, 4, 1.5, Number.NaN]) t.is(b.recover(sig, recid, digest), null, `${b.name} recid ${recid}`);
    t.is(b.recover(sig.subarray(0, 63), 0, digest), null, `${b.name} short sig`);
    t.is(b.recover(sig, 0, digest.subarray(1)), null, `${b.name} short digest`);
    t.is(b.recover(new Uint8Array(64), 0, digest), null, `${b.name} zero sig`);
    t.is(b.recover(compactSig(N, 1n), 0, digest), null, `${b.name} r = n`);
    t.is(b.recover(bigR, 2, digest), null, `${b.name} r + n >= p`);
  }
  if (bs.length > 1) {
    for (const s of [smallR, bigR, compactSig(N - 1n, N - 1n), bytes('random-sig', 64)]) {
      t.deepEqual(recoverAll(bs[1], s, digest), recoverAll(bs[0], s, digest), hex(s) ?? '');
    }
  }
});

test('native verify/recover never throw on non-bytes arguments', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  const loose = native as unknown as {
    verify: (...a: unknown[]) => boolean;
    recover: (...a: unknown[]) => Uint8Array | null;
  };
  t.false(loose.verify(undefined, null, 'x'));
  t.false(loose.verify({ length: 64 }, signed[0].digest, signed[0].pubkey));
  t.is(loose.recover('sig', 0, signed[0].digest), null);
  t.is(loose.recover(signed[0].sig, '0', signed[0].digest), null);
});

test('sign: the same RFC 6979 low-S signature as noble on every backend; it verifies and recovers; entropy hedges it', (t) => {
  const bs = noteBackends(t);
  for (let i = 0; i < 40; i++) {
    const priv = bytes(`sign-key-${i}`, 32);
    const digest = bytes(`sign-digest-${i}`, 32);
    const pubkey = secp256k1.getPublicKey(priv, false);
    const rec = secp256k1.sign(digest, priv, { prehash: false, format: 'recovered' });
    const expected = hex(new Uint8Array([...rec.subarray(1), rec[0]]));
    for (const b of bs) {
      const sig = b.sign(digest, priv);
      t.is(hex(sig), expected, `${b.name} #${i}`);
      t.true(BigInt(`0x${hex(sig.subarray(32, 64))}`) <= N / 2n, `${b.name} low-S`);
      t.true(b.verify(sig.subarray(0, 64), digest, pubkey));
      t.is(hex(b.recover(sig.subarray(0, 64), sig[64], digest)), hex(pubkey));
      // Extra entropy: RFC 6979's additional data, the same in both backends (noble's extraEntropy bytes).
      const entropy = bytes(`sign-entropy-${i}`, 32);
      const hedged = b.sign(digest, priv, entropy);
      const nobleHedged = secp256k1.sign(digest, priv, { prehash: false, format: 'recovered', extraEntropy: entropy });
      t.is(hex(hedged), hex(new Uint8Array([...nobleHedged.subarray(1), nobleHedged[0]])), `${b.name} hedged #${i}`);
      t.not(hex(hedged), expected);
    }
  }
  for (const b of bs) {
    const digest = bytes('d', 32);
    t.throws(() => b.sign(digest, new Uint8Array(32)), undefined, `${b.name}: zero key`);
    t.throws(() => b.sign(digest, hexToBytes(N.toString(16))), undefined, `${b.name}: key = n`);
    t.throws(() => b.sign(digest.subarray(1), bytes('k', 32)), undefined, `${b.name}: short digest`);
    t.throws(() => b.sign(digest, bytes('k', 32), new Uint8Array(31)), undefined, `${b.name}: short entropy`);
  }
});
