import test from 'ava';

/** Trie keys are the key bytes as latin1 strings. */
const L = (b: Buffer): string => b.toString('latin1');
import { randomBytes } from 'node:crypto';
import { sha256 } from '../../ts/crypto/index.js';
import { MerkleTrie, verifyStateProof } from '../../ts/state/trie.js';

const entries = Array.from({ length: 500 }, (_, i) => [Buffer.from(`key-${i}`), randomBytes(40)] as const);

test('root depends only on the key set, not on insertion order', (t) => {
  const a = new MerkleTrie();
  const b = new MerkleTrie();
  for (const [k, v] of entries) a.set(L(k), v);
  for (const [k, v] of [...entries].reverse()) b.set(L(k), v);
  t.deepEqual(a.rootHash(), b.rootHash());
  t.is(a.size, 500);
});

test('incremental updates equal a fresh build; deletes collapse back to the same shape', (t) => {
  const inc = new MerkleTrie();
  for (const [k, v] of entries) inc.set(L(k), v);
  inc.rootHash();
  const changed = Buffer.from('changed');
  inc.set(L(entries[7][0]), changed);
  inc.delete(L(entries[9][0]));
  inc.set('extra', changed);
  const fresh = new MerkleTrie();
  for (const [k, v] of entries) if (!k.equals(entries[9][0])) fresh.set(L(k), k.equals(entries[7][0]) ? changed : v);
  fresh.set('extra', changed);
  t.deepEqual(inc.rootHash(), fresh.rootHash());
  // Removing everything returns to the empty root.
  const empty = new MerkleTrie().rootHash();
  for (const [k] of entries) inc.delete(L(k));
  inc.delete('extra');
  t.deepEqual(inc.rootHash(), empty);
  t.is(inc.size, 0);
});

test('membership proofs verify offline; tampering fails', (t) => {
  const trie = new MerkleTrie();
  for (const [k, v] of entries) trie.set(L(k), v);
  const root = trie.rootHash().toString('hex');
  for (const [k] of entries.slice(0, 50)) {
    const p = trie.prove(k);
    t.truthy(p);
    if (!p) continue;
    t.true(verifyStateProof(p, root, sha256));
  }
  const p = trie.prove(entries[3][0]);
  if (!p) return t.fail();
  t.false(
    verifyStateProof(
      { ...p, value: `${p.value.slice(0, -2)}00` === p.value ? `${p.value.slice(0, -2)}01` : `${p.value.slice(0, -2)}00` },
      root,
      sha256,
    ),
  );
  t.false(verifyStateProof({ ...p, key: Buffer.from('other').toString('hex') }, root, sha256));
  t.false(verifyStateProof(p, '00'.repeat(32), sha256));
  t.is(trie.prove(Buffer.from('absent')), null);
});
