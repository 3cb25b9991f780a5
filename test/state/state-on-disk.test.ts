import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { sha256 } from '../../ts/crypto/index.js';
import { type KeyStr, type StateChanges, StateStore, keyBytes } from '../../ts/state/state-store.js';
import { verifyStateProof } from '../../ts/state/trie.js';
import { type KvStore, openRocksStore, stateKey } from '../../ts/storage/index.js';
import { rng } from '../helpers/history-chain.js';

const account = (i: number): KeyStr => `\x01${i.toString().padStart(20, '0')}`;
const slot = (owner: number, i: number): KeyStr =>
  `\x03${String.fromCharCode(0x40 + owner).repeat(20)}${'\x00'.repeat(28)}${i.toString().padStart(4, '0')}`;
const ownerOf = (owner: number): string => String.fromCharCode(0x40 + owner).repeat(20);

/** What a block commit does with the state: its changes into `S` in one batch, then the store told. */
async function commit(db: KvStore, store: StateStore, changes: StateChanges): Promise<void> {
  const batch = db.batch();
  for (const [k, v] of changes) {
    if (v === null) batch.del(stateKey(keyBytes(k)));
    else batch.put(stateKey(keyBytes(k)), v);
  }
  await batch.write();
  store.markDurable(changes);
}

const sortedEntries = (s: StateStore): [KeyStr, string][] =>
  [...s.entries()].map(([k, v]): [KeyStr, string] => [k, v.toString('hex')]).sort((a, b) => (a[0] < b[0] ? -1 : 1));

test('a state larger than its cache reads, roots and proves exactly as a large cache and a memory-only state', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'native-state-disk-'));
  const small = await openRocksStore(join(dir, 'small'));
  const large = await openRocksStore(join(dir, 'large'));
  try {
    // 4 KiB holds a few dozen entries: nearly every read of the small store goes to RocksDB.
    const stores = {
      memory: new StateStore(),
      small: new StateStore({ db: small, cacheBytes: 4096 }),
      large: new StateStore({ db: large, cacheBytes: 64 * 2 ** 20 }),
    };
    const seed = Date.now();
    const r = rng(seed);
    const keys = new Set<KeyStr>();
    for (let round = 0; round < 60; round++) {
      const changes: StateChanges = new Map();
      const n = 1 + r(400);
      for (let i = 0; i < n; i++) {
        const k = r(5) === 0 ? slot(r(3), r(200)) : account(r(3000));
        keys.add(k);
        changes.set(k, r(6) === 0 ? null : Buffer.from(`${round}:${i}:${r(1e9)}`));
      }
      const snapshot = stores.small.snapshot();
      const before = new Map([...keys].map((k) => [k, stores.small.get(k)?.toString('hex')]));
      const undos = {
        memory: stores.memory.applyChanges(new Map(changes)),
        small: stores.small.applyChanges(new Map(changes)),
        large: stores.large.applyChanges(new Map(changes)),
      };
      t.deepEqual(undos.small, undos.memory, `undo records (seed ${seed}, round ${round})`);
      t.deepEqual(undos.large, undos.memory, `undo records (seed ${seed}, round ${round})`);
      const root = stores.memory.root();
      t.deepEqual(stores.small.root(), root, `seed ${seed}, round ${round}`);
      t.deepEqual(stores.large.root(), root, `seed ${seed}, round ${round}`);
      // What a call running off the main thread reads: the state it opened on, whatever is applied since.
      for (const k of keys) t.is(snapshot.get(k)?.toString('hex'), before.get(k), `snapshot (seed ${seed})`);
      snapshot.release();
      if (r(4) === 0) {
        // An abandoned proposal: back to the committed state, nothing of it written.
        for (const name of ['memory', 'small', 'large'] as const) stores[name].revert(undos[name]);
        t.deepEqual(stores.small.memoryStats().unwritten, 0, 'a reverted proposal leaves nothing unwritten');
      } else {
        await commit(small, stores.small, changes);
        await commit(large, stores.large, changes);
        t.is(stores.small.memoryStats().unwritten, 0, 'a durable block leaves nothing unwritten');
      }
      if (round % 10 !== 9) continue;
      for (const k of keys) {
        const want = stores.memory.get(k)?.toString('hex');
        t.is(stores.small.get(k)?.toString('hex'), want, `get (seed ${seed})`);
        t.is(stores.large.get(k)?.toString('hex'), want, `get (seed ${seed})`);
      }
      for (const k of [...keys].slice(0, 20)) {
        const p = stores.memory.prove(keyBytes(k));
        t.deepEqual(stores.small.prove(keyBytes(k)), p);
        t.deepEqual(stores.large.prove(keyBytes(k)), p);
        if (p) t.true(verifyStateProof(p, stores.small.root().toString('hex'), sha256));
      }
      for (let o = 0; o < 3; o++) {
        const want = [...stores.memory.storageKeysOf(ownerOf(o))].sort();
        t.deepEqual([...stores.small.storageKeysOf(ownerOf(o))].sort(), want);
        t.deepEqual([...stores.large.storageKeysOf(ownerOf(o))].sort(), want);
      }
      const all = sortedEntries(stores.memory);
      t.deepEqual(sortedEntries(stores.small), all);
      t.deepEqual(sortedEntries(stores.large), all);
      t.is(stores.small.size, all.length);
      t.deepEqual(
        [...stores.small.entriesWithPrefix('\x03')].map(([k]) => k).sort(),
        all.filter(([k]) => k.startsWith('\x03')).map(([k]) => k),
      );
    }
    t.true(stores.small.cache.bytes <= 4096, 'the small cache stays within its bound');
    // A restart: the trie rebuilt from `S` alone gives the same root, and reads come from disk.
    const reopened = new StateStore({ db: small, cacheBytes: 4096 });
    t.is(await reopened.rebuildTrie(), stores.memory.size);
    t.deepEqual(reopened.root(), stores.memory.root());
    for (const k of keys) t.is(reopened.get(k)?.toString('hex'), stores.memory.get(k)?.toString('hex'));
  } finally {
    await small.close();
    await large.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('changes not yet durable are read from memory, survive a later proposal and are dropped by their revert', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'native-state-disk-'));
  const db = await openRocksStore(join(dir, 'db'));
  try {
    const store = new StateStore({ db, cacheBytes: 1 });
    const a = account(1);
    const b = account(2);
    await commit(db, store, new Map([[a, Buffer.from('a0')]]));
    // Dev-chain writes between blocks: applied, not written (they go with the next block).
    const dev = store.applyChanges(new Map([[b, Buffer.from('b1')]]));
    const proposal = store.applyChanges(
      new Map([
        [a, Buffer.from('a1')],
        [b, null],
      ]),
    );
    t.is(store.get(a)?.toString(), 'a1');
    t.is(store.get(b), undefined);
    store.revert(proposal);
    t.is(store.get(a)?.toString(), 'a0', 'back to the committed value, read from disk');
    t.is(store.get(b)?.toString(), 'b1', 'the dev write is still there');
    t.is(store.memoryStats().unwritten, 1);
    store.revert(dev);
    t.is(store.get(b), undefined);
    t.is(store.memoryStats().unwritten, 0);
    t.is(store.size, 1);
    // A prefetch reads what is missing in one multi-get; absent keys are remembered too.
    const big = new StateStore({ db, cacheBytes: 2 ** 20 });
    t.is(big.prefetch([a, b, a]), 2);
    t.is(big.prefetch([a, b]), 0);
    t.is(big.get(a)?.toString(), 'a0');
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
