import { Chain } from '../chain/index.js';
import type { ChainReader } from '../chain/interface.js';

/**
 * The chain behind a query's ChainReader, for the on-disk indexes alone (state index, chain index, NFT index):
 * they keep their tables in the chain's database and follow its commits, which the read interface does not offer.
 * ts/node opens them on the chain it built; a context built without a node (tests, benches) hands a Chain as well,
 * and an index opens on its first query.
 */
export function indexedChain(reader: ChainReader): Chain {
  if (reader instanceof Chain) return reader;
  throw new Error('the chain indexes are built on the Chain that ts/node opened, not on another ChainReader');
}
