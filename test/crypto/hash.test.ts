import { createHash } from 'node:crypto';
import test from 'ava';
import { jsBackend } from '../../ts/crypto/js.js';
import { loadNativeAddon } from '../../ts/crypto/native.js';
import { bytes, hex, nativeOrSkip, noteBackends, utf8 } from './fixtures.js';

const SHA256 = {
  '': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  abc: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq: '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
};
const KECCAK256 = {
  '': 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
  abc: '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45',
  // function selector source: keccak256("transfer(address,uint256)") starts a9059cbb
  'transfer(address,uint256)': 'a9059cbb2ab09eb219583f4a59a5d0623ade346d962bcd4e46b11da047c9049b',
};

/** Independent reference merkle (node:crypto), Bitcoin-style odd duplication. */
function refMerkle(leaves: Uint8Array[]): string {
  if (leaves.length === 0) return '00'.repeat(32);
  let level: Buffer[] = leaves.map((l) => Buffer.from(l));
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const r = level[i + 1] ?? level[i];
      next.push(createHash('sha256').update(level[i]).update(r).digest());
    }
    level = next;
  }
  return level[0].toString('hex');
}

test('sha256 and keccak256 known vectors on every backend', (t) => {
  for (const b of noteBackends(t)) {
    for (const [input, want] of Object.entries(SHA256)) t.is(hex(b.sha256(utf8(input))), want, `${b.name} sha256(${input})`);
    for (const [input, want] of Object.entries(KECCAK256))
      t.is(hex(b.keccak256(utf8(input))), want, `${b.name} keccak(${input})`);
  }
});

test('sha256/keccak256 agree across backends for many lengths, views and offsets', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  const big = bytes('hash-lengths', 5000);
  for (const len of [0, 1, 31, 32, 33, 55, 56, 63, 64, 65, 127, 128, 135, 136, 137, 1000, 4999]) {
    const view = big.subarray(1, 1 + len); // non-zero byteOffset into a shared buffer
    t.is(hex(native.sha256(view)), hex(jsBackend.sha256(view)), `sha256 len ${len}`);
    t.is(hex(native.keccak256(view)), hex(jsBackend.keccak256(view)), `keccak len ${len}`);
  }
  t.is(hex(native.sha256(Buffer.from('abc'))), SHA256.abc, 'accepts a Node Buffer');
  // Results are fresh arrays, not views of a reused scratch buffer.
  const a = native.sha256(utf8('abc'));
  const k = native.keccak256(utf8(''));
  native.sha256(utf8('other'));
  native.keccak256(utf8('other'));
  t.is(hex(a), SHA256.abc);
  t.is(hex(k), KECCAK256['']);
  t.not(a.buffer, k.buffer);
  t.is(a.length, 32);
  // Input aliasing the output region is fine (hash is computed before it is written).
  const addon = loadNativeAddon();
  if (addon) {
    const buf = new Uint8Array(new ArrayBuffer(40));
    buf.set(utf8('abc'));
    addon.sha256Into(buf.subarray(0, 3), buf);
    t.is(hex(buf.subarray(0, 32)), SHA256.abc);
    t.throws(() => addon.keccak256Into(utf8('x'), new Uint8Array(31)), { instanceOf: TypeError });
  }
});

test('sha256Many equals sha256 of each item (serial and parallel paths)', (t) => {
  for (const b of noteBackends(t)) {
    for (const n of [0, 1, 7, 255, 256, 1000]) {
      const items = Array.from({ length: n }, (_, i) => bytes(`many-${i}`, i % 100));
      const got = b.sha256Many(items);
      t.is(got.length, n);
      t.deepEqual(
        got.map(hex),
        items.map((x) => hex(jsBackend.sha256(x))),
        `${b.name} n=${n}`,
      );
      if (n > 1) t.is(got[0].length, 32);
    }
  }
});

test('merkleRoot for 0,1,2,3,5 leaves matches an independent reference', (t) => {
  for (const b of noteBackends(t)) {
    for (const n of [0, 1, 2, 3, 5]) {
      const leaves = Array.from({ length: n }, (_, i) => bytes(`leaf-${i}`, 32));
      t.is(hex(b.merkleRoot(leaves)), refMerkle(leaves), `${b.name} ${n} leaves`);
    }
    const one = bytes('single', 32);
    t.is(b.merkleRoot([one]), one, `${b.name}: one leaf is returned as is`);
    t.is(hex(b.merkleRoot([])), '00'.repeat(32));
  }
});

test('merkleRoot agrees across backends for larger trees (parallel levels)', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  for (const n of [4, 6, 7, 8, 9, 511, 512, 513, 1000, 4097]) {
    const leaves = Array.from({ length: n }, (_, i) => bytes(`tree-${i}`, 32));
    t.is(hex(native.merkleRoot(leaves)), hex(jsBackend.merkleRoot(leaves)), `${n} leaves`);
  }
  const leaves = [bytes('a', 32), bytes('b', 32), bytes('c', 32)];
  t.is(hex(native.merkleRoot(leaves)), refMerkle(leaves));
});

test('native rejects bad arguments with a TypeError instead of crashing', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  const anyNative = native as unknown as Record<string, (...a: unknown[]) => unknown>;
  t.throws(() => anyNative.sha256('abc'), { instanceOf: TypeError });
  t.throws(() => anyNative.keccak256(undefined), { instanceOf: TypeError });
  t.throws(() => anyNative.sha256Many([utf8('a'), 'b']), { instanceOf: TypeError });
  t.throws(() => native.merkleRoot([new Uint8Array(32), new Uint8Array(31)]), { instanceOf: TypeError });
});
