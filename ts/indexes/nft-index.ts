import type { Chain } from '../chain/index.js';
import { NFT_NS, NftIndex, isNftKey } from '../modules/index.js';
import type { KeyStr } from '../state/index.js';
import { prefixEnd, stateKey } from '../storage/index.js';

const indexes = new WeakMap<Chain, NftIndex>();
/** NFT records read per range read while building. */
const BUILD_CHUNK = 10_000;

/**
 * An index of the chain's NFT records: the NFT namespace of the `S` table (a prefix range, not a scan of
 * the whole state), with the dev chain's writes not yet in a block on top. Built in the caller's tick, so
 * it describes the settled head exactly (no block lands while the range is read).
 */
function buildNftIndex(chain: Chain): NftIndex {
  const index = new NftIndex();
  const pending = chain.devWrites?.current();
  const db = chain.blocks.db;
  const lt = prefixEnd(stateKey(Buffer.from([NFT_NS.nft])));
  let gte = stateKey(Buffer.from([NFT_NS.nft]));
  for (;;) {
    const rows = db.rangeSync({ gte, lt, limit: BUILD_CHUNK });
    for (const [k, v] of rows) {
      const key: KeyStr = k.toString('latin1', 1);
      if (!pending?.has(key)) index.apply(key, undefined, v);
    }
    if (rows.length < BUILD_CHUNK) break;
    gte = Buffer.concat([rows[rows.length - 1][0], Buffer.from([0])]);
  }
  if (pending) for (const [k, v] of pending) if (v !== null && isNftKey(k)) index.apply(k, undefined, v);
  return index;
}

/**
 * The NFT index of a chain (the nft module's NftIndex, ts/modules/nft/nft-index.ts; this file only feeds it): built from the NFT records on first use, then fed by
 * every committed block's NFT changes (the block's undo record has the old values, the state the new ones),
 * so it always describes the head. Blocks abandoned before commit never reach it; a rollback of committed
 * blocks rebuilds it.
 */
export async function nftIndexOf(chain: Chain): Promise<NftIndex> {
  await chain.settled();
  let index = indexes.get(chain);
  if (!index) {
    index = buildNftIndex(chain);
    indexes.set(chain, index);
    chain.on('block', (_block, _result, undo) => {
      const current = indexes.get(chain) as NftIndex;
      for (const [k, before] of undo) if (isNftKey(k)) current.apply(k, before, chain.state.get(k));
    });
    // A rollback names the keys it restored, not their values at the abandoned head: when NFT keys are among
    // them the index is built afresh (rollbacks are rare: dev snapshots, a node's operator).
    chain.on('rollback', (_height, keys) => {
      for (const k of keys) {
        if (!isNftKey(k)) continue;
        indexes.set(chain, buildNftIndex(chain));
        return;
      }
    });
  }
  return index;
}
