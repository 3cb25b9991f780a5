import type { Chain } from '../chain/chain.js';
import { NftIndex } from '../ledger/nft/index.js';
import { NS } from '../state/accounts.js';

const indexes = new WeakMap<Chain, NftIndex>();

/**
 * The NFT index of a chain (ledger/nft/nft-index.ts): built from the head state on first use (one pass
 * over the state), then fed by every committed block's NFT changes (the block's undo record has the old
 * values, the state the new ones), so it always describes the head. Blocks abandoned before commit
 * never reach it; a rollback of committed blocks rebuilds it.
 */
export async function nftIndexOf(chain: Chain): Promise<NftIndex> {
  await chain.settled();
  let index = indexes.get(chain);
  if (!index) {
    index = NftIndex.build(chain.state.entries());
    indexes.set(chain, index);
    chain.on('block', (_block, _result, undo) => {
      const current = indexes.get(chain) as NftIndex;
      for (const [k, before] of undo) if (k.charCodeAt(0) === NS.nft) current.apply(k, before, chain.state.get(k));
    });
    // A rollback names the keys it restored, not their values at the abandoned head: when NFT keys are among
    // them the index is built afresh (rollbacks are rare: dev snapshots, a node's operator).
    chain.on('rollback', (_height, keys) => {
      for (const k of keys) {
        if (k.charCodeAt(0) !== NS.nft) continue;
        indexes.set(chain, NftIndex.build(chain.state.entries()));
        return;
      }
    });
  }
  return index;
}
