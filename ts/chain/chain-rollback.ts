/**
 * Chain.rollbackTo's work, done while the chain is held (docs/storage.md, "Rollback"): dev writes not yet in a
 * block dropped, then the blocks above the target removed and the state they changed put back in one batch.
 */
import type { StateStore } from '../state/index.js';
import type { KvOp } from '../storage/index.js';
import { toHex } from '../util/index.js';
import type { Block } from './block.js';
import type { BlockStore } from './block-store.js';
import { NoSuchHeightError } from './chain-types.js';
import { type PendingDevWrites, devPatchKey } from './dev-patches.js';
import { HistoryUnavailableError } from './state-history.js';

/**
 * Roll the store and the state back to `height` (the head is `head`); `setHead` is given the new head once the
 * state is back, before its root is checked. Returns the state keys changed and whether blocks were removed.
 */
export async function rollbackHeld(
  store: { blocks: BlockStore; state: StateStore; devWrites: PendingDevWrites | null },
  head: number,
  height: number,
  setHead: (block: Block) => void,
): Promise<{ changed: Set<string>; removed: boolean }> {
  const { blocks, state, devWrites } = store;
  const changed = new Set<string>();
  if (!Number.isSafeInteger(height) || height < 0 || height > head) throw new NoSuchHeightError(height, head);
  if (height < blocks.history.oldest) throw new HistoryUnavailableError(height, blocks.history.oldest);
  // Dev writes not yet in a block belong to the head being left: the live state goes back to the head's first.
  if (devWrites && devWrites.size > 0) for (const k of await devWrites.drop(state)) changed.add(k);
  if (height === head) return { changed, removed: false };
  const target = (await blocks.getBlock(height)) as Block;
  // Dev-write records of the removed heights go in the same batch (a new block there writes its own).
  const patches: KvOp[] = [];
  if (devWrites) for (let h = height + 1; h <= head; h++) patches.push({ type: 'del', key: devPatchKey(h) });
  // The values being replaced are read before the batch overwrites them (the undo record of the
  // restore, which open snapshots read through).
  const restore = await blocks.rollbackTo(height, patches, (keys) => state.prefetch(keys));
  for (const k of restore.keys()) changed.add(k);
  state.applyChanges(restore);
  state.markDurable(restore);
  setHead(target);
  const root = toHex(state.root());
  if (root !== target.state_root) throw new Error(`state root mismatch after rollback to ${height}: ${root}`);
  return { changed, removed: true };
}
