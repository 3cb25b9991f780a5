import type { Chain } from '../chain/chain.js';
import { NftIndex } from '../ledger/nft/index.js';
import { NS } from '../state/accounts.js';

const indexes = new WeakMap<Chain, NftIndex>();

/**
 * The NFT index of a chain (ledger/nft/nft-index.ts): built from the head state on first use (one pass
 * over the state), then fed by every committed block's NFT changes (the block's undo record has the old
 * values, the state the new ones), so it always describes the head. Blocks abandoned before commit
 * never reach it.
 */
export async function nftIndexOf(chain: Chain): Promise<NftIndex> {
  await chain.settled();
  let index = indexes.get(chain);
  if (!index) {
    const built = NftIndex.build(chain.state.entries());
    chain.on('block', (_block, _result, undo) => {
      for (const [k, before] of undo) if (k.charCodeAt(0) === NS.nft) built.apply(k, before, chain.state.get(k));
    });
    indexes.set(chain, built);
    index = built;
  }
  return index;
}
