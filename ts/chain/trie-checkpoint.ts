/**
 * Trie checkpoints (docs/storage.md, "State on disk"): the native trie's shape and hashes saved to a file with
 * the block they belong to, so a restart loads the trie instead of re-hashing every value in `S`. The file
 * is written at a clean shutdown and every N blocks; at start the checkpoint is used when it names a block of
 * this chain at or below the head whose later change sets the history still holds: the keys those blocks
 * changed are read from `S` and applied, and the chain then checks the head's state root. Anything else
 * (missing, truncated or corrupt file, a rollback below it, pruned history, a JS trie) falls back to streaming
 * `S` into a new trie.
 */
import { NativeTrie, createTrie, type KeyStr, type StateStore, type AuthenticatedTrie } from '../state/index.js';
import { fromHex, toHex } from '../util/index.js';
import type { Block } from './block.js';
import type { BlockStore } from './block-store.js';

export interface TrieCheckpointOptions {
  /** The checkpoint file (the node uses `<data-dir>/state-trie.ckpt`). */
  path: string;
  /** A checkpoint after every this many blocks (0: at clean shutdown only). */
  everyBlocks: number;
}

/** The checkpoint's file name in the node's data directory. */
export const TRIE_CHECKPOINT_FILE = 'state-trie.ckpt';

/** Blocks between checkpoints by default (docs/storage.md: the cost of a save against the replay it saves). */
export const DEFAULT_CHECKPOINT_EVERY_BLOCKS = 1000;

/** How the trie came back at start. */
export type TrieStart =
  | { from: 'checkpoint'; height: number; replayedBlocks: number; replayedKeys: number; ms: number }
  | { from: 'rebuild'; keys: number; ms: number; reason: string }
  | { from: 'genesis'; ms: number };

type Loader = (path: string, onInvalid?: (reason: string) => void) => { trie: AuthenticatedTrie; meta: Buffer } | null;

/** NativeTrie.loadCheckpoint where the trie has checkpoints (feature-detected: an addon without them rebuilds). */
const loadCheckpoint: Loader | null =
  (NativeTrie as unknown as { loadCheckpoint?: Loader }).loadCheckpoint?.bind(NativeTrie) ?? null;

/** Whether the state's trie can be checkpointed here (the native trie of an addon with checkpoints). */
export function trieCheckpointsSupported(): boolean {
  return loadCheckpoint !== null && createTrie() instanceof NativeTrie;
}

const META_VERSION = 1;
const META_BYTES = 1 + 8 + 32 + 32;

/** The checkpoint's meta: version u8 · height u64 · block hash · state root. */
export function checkpointMeta(block: Pick<Block, 'index' | 'hash' | 'state_root'>): Buffer {
  const b = Buffer.alloc(META_BYTES);
  b[0] = META_VERSION;
  b.writeBigUInt64BE(BigInt(block.index), 1);
  b.set(fromHex(block.hash), 9);
  b.set(fromHex(block.state_root), 41);
  return b;
}

function decodeMeta(b: Buffer): { height: number; hash: string; root: string } | null {
  if (b.length !== META_BYTES || b[0] !== META_VERSION) return null;
  return { height: Number(b.readBigUInt64BE(1)), hash: toHex(b.subarray(9, 41)), root: toHex(b.subarray(41, 73)) };
}

/**
 * Put the checkpoint's trie into `state` and bring it to `head` by re-applying the keys changed since. Returns
 * why not when the checkpoint cannot be used (the state's trie is then as before: empty). The caller checks
 * the head's root (and rebuilds when it differs).
 */
export async function restoreFromCheckpoint(
  state: StateStore,
  blocks: BlockStore,
  head: Block,
  path: string,
): Promise<{ replayedBlocks: number; replayedKeys: number; height: number } | string> {
  if (loadCheckpoint === null) return 'this trie has no checkpoints (JS twin or an addon without them)';
  let invalid = 'no checkpoint file';
  const loaded = loadCheckpoint(path, (reason) => {
    invalid = reason;
  });
  if (loaded === null) return invalid;
  const meta = decodeMeta(loaded.meta);
  if (meta === null) return 'checkpoint meta of another version';
  if (meta.height > head.index) return `checkpoint at ${meta.height} is above the head ${head.index} (rolled back since)`;
  if (meta.height < blocks.history.oldest)
    return `checkpoint at ${meta.height} is below the oldest change set kept (${blocks.history.oldest})`;
  const block = await blocks.getBlock(meta.height);
  if (block?.hash !== meta.hash) return `checkpoint block ${meta.height} is not this chain's`;
  if (toHex(loaded.trie.rootHash()) !== meta.root || meta.root !== block.state_root)
    return `checkpoint root differs from block ${meta.height}'s`;
  const changed = new Set<KeyStr>();
  for (let h = meta.height + 1; h <= head.index; h++) for (const k of blocks.history.changeSet(h).keys()) changed.add(k);
  state.replaceTrie(loaded.trie);
  state.refreshTrie(changed);
  return { replayedBlocks: head.index - meta.height, replayedKeys: changed.size, height: meta.height };
}

/**
 * The head's trie at open: from the checkpoint at `path` when it can be used, else streamed from `S`; either
 * way checked against the head's state root (a mismatch after the rebuild throws: the store is damaged).
 */
export async function openStateTrie(
  state: StateStore,
  blocks: BlockStore,
  head: Block,
  path: string | null,
  t0: number,
): Promise<TrieStart> {
  let reason = 'no checkpoint configured';
  if (path !== null) {
    const restored = await restoreFromCheckpoint(state, blocks, head, path);
    if (typeof restored === 'string') reason = restored;
    else if (toHex(state.root()) === head.state_root) return { from: 'checkpoint', ...restored, ms: performance.now() - t0 };
    else {
      reason = `checkpoint at ${restored.height} brought to the head gives another root`;
      state.replaceTrie(null);
    }
  }
  const keys = await state.rebuildTrie();
  const root = toHex(state.root());
  if (root !== head.state_root) {
    throw new Error(`state root mismatch at height ${head.index}: disk state ${root}, block ${head.state_root}`);
  }
  return { from: 'rebuild', keys, reason, ms: performance.now() - t0 };
}

/** Writes checkpoints of a chain's trie, one at a time. */
export class TrieCheckpoints {
  /** The write in progress: resolves to its error, or null. */
  private writing: Promise<Error | null> | null = null;

  constructor(
    private readonly opts: TrieCheckpointOptions,
    private readonly state: StateStore,
    private readonly onWritten: (height: number, err: Error | null, ms: number) => void,
  ) {}

  get path(): string {
    return this.opts.path;
  }

  get busy(): boolean {
    return this.writing !== null;
  }

  /** Resolves once no checkpoint is being written. */
  async idle(): Promise<void> {
    while (this.writing !== null) await this.writing;
  }

  /** A periodic checkpoint is due after the block at height. */
  due(height: number): boolean {
    return this.opts.everyBlocks > 0 && height % this.opts.everyBlocks === 0;
  }

  /**
   * Write a checkpoint of the head now (a clean shutdown), after any being written: `settled` waits until no block
   * is being applied, then `head` is the block the trie holds, or null when it is not that block's alone (dev
   * writes not yet in a block). False when nothing was written; throws when the write fails.
   */
  async writeNow(settled: () => Promise<void>, head: () => Block | null): Promise<boolean> {
    for (;;) {
      await settled();
      if (!this.busy) break;
      await this.idle();
    }
    const block = head();
    const write = block === null ? null : this.start(block);
    if (write === null) return false;
    const err = await write;
    if (err) throw err;
    return true;
  }

  /**
   * Start writing a checkpoint of the trie as it is now, which must be `head`'s state (called with the chain
   * held, or settled with no dev writes pending). Null when one is being written or the trie has no checkpoints.
   */
  start(head: Block): Promise<Error | null> | null {
    if (this.writing !== null) return null;
    const t0 = performance.now();
    const write = this.state.saveTrieCheckpoint(this.opts.path, checkpointMeta(head));
    if (write === null) return null;
    const done = (err: Error | null): Error | null => {
      this.writing = null;
      this.onWritten(head.index, err, performance.now() - t0);
      return err;
    };
    this.writing = write.then(
      () => done(null),
      (err: unknown) => done(err as Error),
    );
    return this.writing;
  }
}
