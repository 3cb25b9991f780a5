import { existsSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { sha256, loadNativeAddon } from '../../ts/crypto/index.js';
import { CheckpointError, NativeTrie } from '../../ts/state/native-trie.js';
import { verifyStateProof } from '../../ts/state/trie.js';
import { rng, tempDir } from '../helpers/util.js';

const addon = loadNativeAddon();
const checkpoints = typeof addon?.trieSave === 'function';

/** Without the addon there are no checkpoints (callers rebuild); CI builds it (NATIVE_REQUIRE=1). */
function skipWithoutAddon(t: ExecutionContext): boolean {
  if (checkpoints) return false;
  if (process.env.NATIVE_REQUIRE === '1') t.fail('native addon with checkpoints required (NATIVE_REQUIRE=1)');
  else t.pass('native addon not built: checkpoints unsupported');
  return true;
}

/** A trie of `n` keys from a seeded generator, with some deleted (so its arenas hold free records). */
/**
 * The value last set for each key (latin1), by buildTrie and mutate: the native trie holds no values (the state
 * store does), so proofs and a reference trie take them from here.
 */
const values = new Map<string, Buffer>();
const lastValue = (k: Buffer): Buffer => values.get(k.toString('latin1')) as Buffer;

function buildTrie(seed: number, n: number): { trie: NativeTrie; keys: Buffer[]; next: () => number } {
  const next = rng(seed);
  const trie = new NativeTrie(addon as NonNullable<typeof addon>);
  const keys: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const k = bytes(next, 20 + (i % 13));
    keys.push(k);
    const v = bytes(next, 40);
    values.set(k.toString('latin1'), v);
    trie.set(k.toString('latin1'), v);
    if (i % 7 === 6) trie.delete(keys.splice(Math.floor(next() * keys.length), 1)[0].toString('latin1'));
    if (i % 5000 === 4999) trie.rootHash();
  }
  trie.rootHash();
  return { trie, keys, next };
}

function bytes(next: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
  return b;
}

/** The same inserts, updates and deletes (drawn from `next`) applied to every trie given. */
function mutate(tries: NativeTrie[], keys: Buffer[], next: () => number, ops: number): void {
  for (let i = 0; i < ops; i++) {
    const r = next();
    if (r < 0.4) {
      const k = bytes(next, 32);
      keys.push(k);
      const v = bytes(next, 30);
      values.set(k.toString('latin1'), v);
      for (const t of tries) t.set(k.toString('latin1'), v);
    } else if (r < 0.8) {
      const k = keys[Math.floor(next() * keys.length)];
      const v = bytes(next, 50);
      values.set(k.toString('latin1'), v);
      for (const t of tries) t.set(k.toString('latin1'), v);
    } else {
      const [k] = keys.splice(Math.floor(next() * keys.length), 1);
      for (const t of tries) t.delete(k.toString('latin1'));
    }
  }
}

function load(path: string): { trie: NativeTrie; meta: Buffer } {
  const reasons: string[] = [];
  const got = NativeTrie.loadCheckpoint(path, (r) => reasons.push(r));
  if (!got) throw new Error(`checkpoint did not load: ${reasons.join(', ')}`);
  return got;
}

function loadFails(path: string): string {
  const reasons: string[] = [];
  const got = NativeTrie.loadCheckpoint(path, (r) => reasons.push(r));
  if (got) throw new Error('a damaged checkpoint loaded');
  return reasons.join(', ');
}

test('save and load: same root, meta and proofs; the same further updates give the same roots', async (t) => {
  if (skipWithoutAddon(t)) return;
  const { dir, cleanup } = tempDir('trie-ckpt-');
  t.teardown(cleanup);
  const { trie, keys, next } = buildTrie(1, 3000);
  const path = join(dir, 'trie.ckpt');
  const meta = Buffer.from('height 42 and some caller bytes');
  const root = trie.rootHash();
  await trie.saveCheckpoint(path, meta);
  t.false(existsSync(`${path}.tmp`));
  const loaded = load(path);
  t.deepEqual(loaded.meta, meta);
  t.deepEqual(loaded.trie.rootHash(), root);

  // The loaded trie holds shape and hashes only: give it the values of the keys to prove (same values: the
  // root must not move), then its proofs are the original's.
  for (const k of keys.slice(0, 20)) loaded.trie.set(k.toString('latin1'), lastValue(k));
  t.deepEqual(loaded.trie.rootHash(), root);
  for (const k of keys.slice(0, 20)) {
    const p = loaded.trie.prove(k, lastValue(k));
    t.deepEqual(p, trie.prove(k, lastValue(k)));
    t.true(p !== null && verifyStateProof(p, root.toString('hex'), sha256));
  }

  for (let round = 0; round < 5; round++) {
    mutate([trie, loaded.trie], keys, next, 400);
    t.deepEqual(loaded.trie.rootHash(), trie.rootHash(), `round ${round}`);
  }
  for (const k of keys.slice(-10)) t.deepEqual(loaded.trie.prove(k, lastValue(k)), trie.prove(k, lastValue(k)));

  // An empty trie round-trips too, and a second save replaces the first file.
  const empty = new NativeTrie(addon as NonNullable<typeof addon>);
  await empty.saveCheckpoint(path, Buffer.alloc(0));
  const back = load(path);
  t.deepEqual(back.trie.rootHash(), empty.rootHash());
  t.is(back.meta.length, 0);
});

test('a truncated, altered, wrong-version or missing checkpoint loads as null', async (t) => {
  if (skipWithoutAddon(t)) return;
  const { dir, cleanup } = tempDir('trie-ckpt-');
  t.teardown(cleanup);
  const { trie } = buildTrie(2, 2000);
  const path = join(dir, 'trie.ckpt');
  await trie.saveCheckpoint(path, Buffer.from('meta'));
  const good = readFileSync(path);
  const variant = (name: string, b: Buffer): string => {
    const p = join(dir, name);
    writeFileSync(p, b);
    return p;
  };

  t.regex(loadFails(join(dir, 'absent.ckpt')), /missing/);
  const cut = variant('cut.ckpt', good);
  truncateSync(cut, good.length - 1);
  t.regex(loadFails(cut), /truncated/);
  t.regex(loadFails(variant('header-only.ckpt', good.subarray(0, 60))), /truncated/);
  t.regex(loadFails(variant('extended.ckpt', Buffer.concat([good, Buffer.from([0])]))), /truncated or extended/);
  for (const at of [good.length - 1, Math.floor(good.length / 2), 120, 50, 20]) {
    const flipped = Buffer.from(good);
    flipped[at] ^= 0x01;
    t.regex(loadFails(variant(`flip-${at}.ckpt`, flipped)), /checksum mismatch|inconsistent header/, `byte ${at}`);
  }
  const version = Buffer.from(good);
  version.writeUInt32LE(2, 8);
  t.regex(loadFails(variant('v2.ckpt', version)), /unsupported checkpoint version 2/);
  const magic = Buffer.from(good);
  magic.write('XX', 0);
  t.regex(loadFails(variant('magic.ckpt', magic)), /bad magic/);
  // The good file still loads.
  t.deepEqual(load(path).trie.rootHash(), trie.rootHash());
});

test('updates during a save change neither the file (it holds the root at the save) nor the live trie', async (t) => {
  if (skipWithoutAddon(t)) return;
  const { dir, cleanup } = tempDir('trie-ckpt-');
  t.teardown(cleanup);
  // Large enough that the writer is still at work while the updates below run on this thread.
  const { trie, keys, next } = buildTrie(3, 120_000);
  const twin = buildTrie(3, 120_000).trie; // never saved: the reference for the live trie
  const path = join(dir, 'trie.ckpt');
  const rootAtSave = trie.rootHash();
  const saved = trie.saveCheckpoint(path, Buffer.from('at save'));
  // A second save while the first runs is refused, not queued (its snapshot would not be "now").
  await t.throwsAsync(trie.saveCheckpoint(join(dir, 'other.ckpt'), Buffer.alloc(0)), {
    instanceOf: CheckpointError,
    message: /already being written/,
  });
  for (let round = 0; round < 10; round++) {
    mutate([trie, twin], keys, next, 1000);
    t.deepEqual(trie.rootHash(), twin.rootHash(), `round ${round}`);
  }
  await saved;
  t.false(existsSync(join(dir, 'other.ckpt')));
  const loaded = load(path);
  t.deepEqual(loaded.trie.rootHash(), rootAtSave);
  t.deepEqual(loaded.meta, Buffer.from('at save'));
  // And after the save both tries keep agreeing; a new save captures the new root.
  mutate([trie, twin], keys, next, 1000);
  t.deepEqual(trie.rootHash(), twin.rootHash());
  await trie.saveCheckpoint(path, Buffer.from('later'));
  t.deepEqual(load(path).trie.rootHash(), twin.rootHash());
});

test('a save that fails midway keeps the previous checkpoint file and the trie usable', async (t) => {
  if (skipWithoutAddon(t)) return;
  const { dir, cleanup } = tempDir('trie-ckpt-');
  t.teardown(cleanup);
  const { trie, keys, next } = buildTrie(4, 5000);
  const path = join(dir, 'trie.ckpt');
  const firstRoot = trie.rootHash();
  await trie.saveCheckpoint(path, Buffer.from('first'));
  mutate([trie], keys, next, 500);

  // A directory that does not exist: the temp file cannot even be created.
  const missingDir = await t.throwsAsync(trie.saveCheckpoint(join(dir, 'no', 'such', 'dir.ckpt'), Buffer.alloc(0)), {
    instanceOf: CheckpointError,
  });
  t.is(missingDir?.code, 'CHECKPOINT_WRITE');

  // The temp file's name leads to /dev/full: every write fails with ENOSPC, as on a full disk.
  if (existsSync('/dev/full')) {
    symlinkSync('/dev/full', `${path}.tmp`);
    const full = await t.throwsAsync(trie.saveCheckpoint(path, Buffer.from('second')), { instanceOf: CheckpointError });
    t.regex(full?.message ?? '', /space/i);
    t.false(existsSync(`${path}.tmp`), 'the temp file is removed');
  }
  const kept = load(path);
  t.deepEqual(kept.meta, Buffer.from('first'));
  t.deepEqual(kept.trie.rootHash(), firstRoot);

  // The trie kept working, and the next save succeeds.
  const reference = new NativeTrie(addon as NonNullable<typeof addon>);
  for (const k of keys) reference.set(k.toString('latin1'), lastValue(k));
  t.deepEqual(trie.rootHash(), reference.rootHash());
  await trie.saveCheckpoint(path, Buffer.from('third'));
  t.deepEqual(load(path).trie.rootHash(), reference.rootHash());
});

test('without native checkpoints (NATIVE_TRIE=js) loadCheckpoint gives null: the caller rebuilds', (t) => {
  const before = process.env.NATIVE_TRIE;
  process.env.NATIVE_TRIE = 'js';
  try {
    const reasons: string[] = [];
    t.is(
      NativeTrie.loadCheckpoint('/nonexistent/trie.ckpt', (r) => reasons.push(r)),
      null,
    );
    t.deepEqual(reasons, ['trie checkpoints need the native addon']);
  } finally {
    if (before === undefined) delete process.env.NATIVE_TRIE;
    else process.env.NATIVE_TRIE = before;
  }
});
