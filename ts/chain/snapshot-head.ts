/**
 * The chain of a node that joined by state sync (docs/p2p.md, "State sync", "Joining"): its store starts at the
 * snapshot block H, restored state beside it. The genesis block is kept (peers check it at the handshake), the
 * blocks 1..H-1 are not there, state reads start at H (the history starts there), and `earliest block` = H.
 */
import { encodeReceipts } from '../execution/index.js';
import { type KvStore, blockHashKey, blockKey, metaKey, receiptsKey } from '../storage/index.js';
import { u64be } from '../util/index.js';
import { type Block, encodeBlock } from './block.js';
import { HISTORY_FROM, INDEXED_TO } from './state-history.js';

/** Meta key: the lowest height this store holds blocks from, besides genesis (absent: 0, a chain from genesis). */
export const EARLIEST_BLOCK_KEY = metaKey('earliestBlock');
/** The head pointer (block-store.ts writes it with every commit). */
const HEAD_KEY = metaKey('head');

/** The lowest height with a block (besides genesis) and state: 0 unless the node joined by state sync. */
export async function readEarliestBlock(db: KvStore): Promise<number> {
  const raw = await db.get(EARLIEST_BLOCK_KEY);
  return raw ? Number(raw.readBigUInt64BE(0)) : 0;
}

/** The store already has a head (a chain, from genesis or a finished state sync). */
export async function hasChainHead(db: KvStore): Promise<boolean> {
  return (await db.get(HEAD_KEY)) !== undefined;
}

/**
 * Make `head` (the snapshot block, its state already restored into `db` and verified against its state root)
 * the store's head, in one synced write: `genesis` at 0, `head` at its height, the history and its index
 * starting there. Its receipts are not known (no peer protocol carries them): none are written for it.
 */
export async function writeSnapshotHead(db: KvStore, genesis: Block, head: Block): Promise<void> {
  if (genesis.index !== 0 || head.index < 1) throw new Error('a snapshot head needs genesis and a block above it');
  const h = u64be(head.index);
  await db.write(
    [
      { type: 'put', key: blockKey(0), value: Buffer.from(encodeBlock(genesis)) },
      { type: 'put', key: receiptsKey(0), value: Buffer.from(encodeReceipts([])) },
      { type: 'put', key: blockHashKey(genesis.hash), value: u64be(0) },
      { type: 'put', key: blockKey(head.index), value: Buffer.from(encodeBlock(head)) },
      { type: 'put', key: blockHashKey(head.hash), value: h },
      { type: 'put', key: HISTORY_FROM, value: h },
      { type: 'put', key: INDEXED_TO, value: h },
      { type: 'put', key: EARLIEST_BLOCK_KEY, value: h },
      { type: 'put', key: HEAD_KEY, value: h },
    ],
    { sync: true },
  );
}
