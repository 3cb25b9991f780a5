import test from 'ava';

/** Trie keys are the key bytes as latin1 strings. */
const L = (b: Buffer): string => b.toString('latin1');
import { randomBytes } from 'node:crypto';
import { sha256, loadNativeAddon } from '../../ts/crypto/index.js';
import { NativeTrie } from '../../ts/state/native-trie.js';
import { MerkleTrie, verifyStateProof } from '../../ts/state/trie.js';

const addon = loadNativeAddon();

test('native trie and JS twin agree on roots and proofs through random inserts, updates and deletes', (t) => {
  if (!addon) {
    // Without the addon only the JS trie exists (covered by trie.test.ts); CI sets NATIVE_REQUIRE=1.
    if (process.env.NATIVE_REQUIRE === '1') return t.fail('native addon required (NATIVE_REQUIRE=1) but not loaded');
    t.log('native addon not built: nothing to compare');
    return t.pass();
  }
  const js = new MerkleTrie();
  const nat = new NativeTrie(addon);
  t.deepEqual(nat.rootHash(), js.rootHash());
  const keys: Buffer[] = [];
  // The native trie holds no values (the state store does): proofs are given the key's value.
  const values = new Map<string, Buffer>();
  for (let round = 0; round < 30; round++) {
    const ops = 1 + Math.floor(Math.random() * 300);
    for (let i = 0; i < ops; i++) {
      const r = Math.random();
      if (r < 0.55 || keys.length === 0) {
        const k = Buffer.concat([Buffer.from([1 + (i % 3)]), randomBytes(1 + Math.floor(Math.random() * 30))]);
        keys.push(k);
        const v = randomBytes(Math.floor(Math.random() * 60));
        js.set(L(k), v);
        nat.set(L(k), v);
        values.set(L(k), v);
      } else if (r < 0.8) {
        const k = keys[Math.floor(Math.random() * keys.length)];
        const v = randomBytes(40);
        js.set(L(k), v);
        nat.set(L(k), v);
        values.set(L(k), v);
      } else {
        const idx = Math.floor(Math.random() * keys.length);
        const [k] = keys.splice(idx, 1);
        js.delete(L(k));
        nat.delete(L(k));
        values.delete(L(k));
      }
    }
    // Roots are compared only every few rounds, so changes batch up between flushes too.
    if (round % 3 === 2 || round === 29) {
      const root = js.rootHash();
      t.deepEqual(nat.rootHash(), root, `round ${round}`);
      t.is(nat.size, js.size);
      for (const k of keys.slice(0, 10)) {
        const v = values.get(L(k));
        const p = v === undefined ? null : nat.prove(k, v);
        t.deepEqual(p, js.prove(k));
        if (p) t.true(verifyStateProof(p, root.toString('hex'), sha256));
      }
    }
  }
  // Everything removed: both back to the empty root.
  for (const k of keys) {
    js.delete(L(k));
    nat.delete(L(k));
  }
  t.deepEqual(nat.rootHash(), new MerkleTrie().rootHash());
  t.is(nat.prove(Buffer.from('absent'), Buffer.from('value')), null);
});

test('native trie keeps finding keys through heavy delete and re-insert churn (its key index shifts entries back on removal)', (t) => {
  if (!addon) {
    if (process.env.NATIVE_REQUIRE === '1') return t.fail('native addon required (NATIVE_REQUIRE=1) but not loaded');
    return t.pass();
  }
  const js = new MerkleTrie();
  const nat = new NativeTrie(addon);
  const keys = Array.from({ length: 20_000 }, () => randomBytes(1 + Math.floor(Math.random() * 24)));
  const apply = (k: Buffer, v: Buffer | null) => {
    if (v) {
      js.set(L(k), v);
      nat.set(L(k), v);
    } else {
      js.delete(L(k));
      nat.delete(L(k));
    }
  };
  for (const k of keys) apply(k, randomBytes(8));
  t.deepEqual(nat.rootHash(), js.rootHash());
  for (let round = 0; round < 4; round++) {
    // Delete a random half, update the rest (lookups run past the holes), then put the half back.
    const gone = keys.filter(() => Math.random() < 0.5);
    for (const k of gone) apply(k, null);
    for (const k of keys) if (js.get(L(k))) apply(k, randomBytes(8));
    t.deepEqual(nat.rootHash(), js.rootHash(), `round ${round} after deletes`);
    for (const k of gone) apply(k, randomBytes(8));
    t.deepEqual(nat.rootHash(), js.rootHash(), `round ${round} after re-inserts`);
    t.is(nat.size, js.size);
  }
});
