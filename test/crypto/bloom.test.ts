import { keccak_256 } from '@noble/hashes/sha3.js';
import test from 'ava';
import { jsBackend } from '../../ts/crypto/js.js';
import { loadNativeAddon } from '../../ts/crypto/native.js';
import { bytes, fromHex, hex, nativeOrSkip, noteBackends, utf8 } from './fixtures.js';

test("go-ethereum's TestBloomExtensively vector (keccak of the bloom after 100 adds)", (t) => {
  for (const b of noteBackends(t)) {
    const bloom = new Uint8Array(256);
    for (let i = 0; i < 100; i++) b.bloomAdd(bloom, utf8(`xxxxxxxxxx data ${i} yyyyyyyyyyyyyy`));
    t.is(hex(keccak_256(bloom)), 'c8d3ca65cdb4874300a9e39475508f23ed6da09fdbc487f89a2dcf50b09eb263', b.name);
  }
});

test("go-ethereum's TestBloom positives and negatives", (t) => {
  for (const b of noteBackends(t)) {
    const bloom = new Uint8Array(256);
    for (const s of ['testtest', 'test', 'hallo', 'other']) b.bloomAdd(bloom, utf8(s));
    for (const s of ['testtest', 'test', 'hallo', 'other']) t.true(b.bloomTest(bloom, utf8(s)), `${b.name} ${s}`);
    for (const s of ['tes', 'lo']) t.false(b.bloomTest(bloom, utf8(s)), `${b.name} ${s}`);
  }
});

test('the 3-bit rule by hand: an address and a topic set exactly their bits', (t) => {
  const address = fromHex('0xdac17f958d2ee523a2206206994597c13d831ec7'); // USDT
  const topic = keccak_256(utf8('Transfer(address,address,uint256)'));
  t.is(hex(topic), 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'); // ERC-20 Transfer
  const expected = new Set<number>(); // bit positions, 0 = lowest bit of the last byte
  for (const item of [address, topic]) {
    const h = keccak_256(item);
    for (const k of [0, 2, 4]) expected.add((h[k] * 256 + h[k + 1]) % 2048);
  }
  for (const b of noteBackends(t)) {
    const bloom = new Uint8Array(256);
    b.bloomAdd(bloom, address);
    b.bloomAdd(bloom, topic);
    const set = new Set<number>();
    for (let bit = 0; bit < 2048; bit++) if (bloom[255 - Math.floor(bit / 8)] & (1 << (bit % 8))) set.add(bit);
    t.deepEqual(
      [...set].sort((x, y) => x - y),
      [...expected].sort((x, y) => x - y),
      b.name,
    );
    t.true(b.bloomTest(bloom, address) && b.bloomTest(bloom, topic));
    t.false(b.bloomTest(new Uint8Array(256), address));
  }
});

/** 600 blooms: each gets 3 random items, some get the watched address and/or topic. */
function corpus(): { blooms: Uint8Array[]; addrA: Uint8Array; addrB: Uint8Array; topic: Uint8Array } {
  const addrA = bytes('addr-a', 20);
  const addrB = bytes('addr-b', 20);
  const topic = bytes('topic', 32);
  const blooms: Uint8Array[] = [];
  for (let i = 0; i < 600; i++) {
    const bloom = new Uint8Array(256);
    for (let k = 0; k < 3; k++) jsBackend.bloomAdd(bloom, bytes(`noise-${i}-${k}`, 32));
    if (i % 5 === 0) jsBackend.bloomAdd(bloom, addrA);
    if (i % 7 === 0) jsBackend.bloomAdd(bloom, addrB);
    if (i % 3 === 0) jsBackend.bloomAdd(bloom, topic);
    blooms.push(bloom);
  }
  return { blooms, addrA, addrB, topic };
}

test('bloomAdd/bloomTest: native builds byte-identical blooms and answers like the twin', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  for (let i = 0; i < 50; i++) {
    const a = new Uint8Array(256);
    const b = new Uint8Array(256);
    const items = Array.from({ length: i }, (_, k) => bytes(`item-${i}-${k}`, 1 + ((i * k) % 64)));
    for (const item of items) {
      jsBackend.bloomAdd(a, item);
      native.bloomAdd(b, item);
    }
    t.is(hex(b), hex(a));
    for (let k = 0; k < 20; k++) {
      const probe = k < items.length ? items[k] : bytes(`probe-${i}-${k}`, 20);
      t.is(native.bloomTest(a, probe), jsBackend.bloomTest(a, probe));
    }
  }
  const pooled = Buffer.alloc(300).subarray(20, 276); // a 256-byte view at an offset
  native.bloomAdd(pooled, utf8('x'));
  const plain = new Uint8Array(256);
  jsBackend.bloomAdd(plain, utf8('x'));
  t.is(hex(pooled), hex(plain), 'mutates views in place at their offset');
});

test('bloomScan agrees with the JS twin (groups = address OR-list AND topic)', (t) => {
  const { blooms, addrA, addrB, topic } = corpus();
  const queries: Uint8Array[][][] = [
    [[addrA, addrB], [topic]],
    [[addrA]],
    [[addrB], [topic], [addrA]],
    [], // no groups: everything matches
    [[]], // an empty group matches nothing
    [[bytes('absent', 20)]],
  ];
  const bs = noteBackends(t);
  for (const q of queries) {
    const want = jsBackend.bloomScan(blooms, q);
    for (const b of bs) t.deepEqual(b.bloomScan(blooms, q), want, `${b.name} ${q.length} groups`);
  }
  // Construction guarantees these indexes match (bloom false positives may add more).
  const got = new Set(jsBackend.bloomScan(blooms, queries[0]));
  for (let i = 0; i < 600; i += 15) t.true(got.has(i), `bloom ${i} has addrA and topic`);
  t.is(jsBackend.bloomScan(blooms, []).length, 600);
  t.deepEqual(jsBackend.bloomScan([], queries[0]), []);
});

test('bloomScan: contiguous views, separate arrays and the raw concatenated form agree', (t) => {
  const native = nativeOrSkip(t);
  const addon = loadNativeAddon();
  if (!native || !addon) return;
  const { blooms, addrA, topic } = corpus();
  const groups = [[addrA], [topic]];
  const want = jsBackend.bloomScan(blooms, groups);
  const all = new Uint8Array(blooms.length * 256);
  blooms.forEach((b, i) => all.set(b, i * 256));
  const views = blooms.map((_, i) => all.subarray(i * 256, i * 256 + 256));
  t.deepEqual(native.bloomScan(views, groups), want, 'contiguous views (single-buffer fast path)');
  t.deepEqual(native.bloomScan(blooms, groups), want, 'separate arrays');
  t.deepEqual(Array.from(addon.bloomScan(all, groups)), want, 'raw concatenated buffer');
  t.deepEqual(Array.from(addon.bloomScan(blooms, groups)), want, 'raw array of blooms');
  for (const q of [[], [[]], [[addrA, topic]], [[topic], [addrA], [topic]]]) {
    t.deepEqual(native.bloomScan(views, q), jsBackend.bloomScan(blooms, q), `contiguous, ${q.length} groups`);
  }
  t.deepEqual(
    native.bloomScan([views[0], views[2], views[1]], groups),
    jsBackend.bloomScan([views[0], views[2], views[1]], groups),
  );
});

test('native bloom functions reject wrong sizes with a TypeError', (t) => {
  const native = nativeOrSkip(t);
  const addon = loadNativeAddon();
  if (!native || !addon) return;
  t.throws(() => native.bloomAdd(new Uint8Array(255), utf8('x')), { instanceOf: TypeError });
  t.throws(() => native.bloomTest(new Uint8Array(512), utf8('x')), { instanceOf: TypeError });
  t.throws(() => native.bloomScan([new Uint8Array(256), new Uint8Array(10)], [[utf8('x')]]), { instanceOf: TypeError });
  t.throws(() => addon.bloomScan(new Uint8Array(300), [[utf8('x')]]), { instanceOf: TypeError });
});
