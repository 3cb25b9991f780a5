/**
 * The SRC-721 module (docs/nft.md): collections at `SRC721_…` addresses, tokens with their approvals, and
 * operator approvals in the authenticated state. Its operations (operations.ts), handlers (handlers.ts),
 * state keys (keys.ts) with their records (records.ts, store.ts), queries (queries.ts) over the state and
 * its one index of lists (nft-index.ts), invariants (invariants.ts), errors (errors.ts) and events (events.ts).
 */
import { defineModule } from '../kit/module.js';
import { NFT_EVENTS, nftIndexTerms } from './events.js';
import { NFT_HANDLERS } from './handlers.js';
import { NFT_INVARIANTS } from './invariants.js';
import { NFT_NS } from './keys.js';
import { NFT_OPERATIONS } from './operations.js';

export const nftModule = defineModule({
  name: 'nft',
  operations: NFT_OPERATIONS,
  handlers: NFT_HANDLERS,
  namespaces: Object.values(NFT_NS),
  events: NFT_EVENTS,
  indexTerms: nftIndexTerms,
  invariants: NFT_INVARIANTS,
});

export * from './errors.js';
export { addressTerm, collectionTerm, tokenTerm, NFT_EVENTS, type NftEventType } from './events.js';
export { NFT_NS, isNftKey, collectionAddress, COLLECTION_PREFIX } from './keys.js';
export { NftIndex } from './nft-index.js';
export { NFT_OPERATIONS, type NftOperation, type NftMessage } from './operations.js';
export { NftLists, NftReads, tokenUri, type CollectionInfo, type TokenInfo, type Page } from './queries.js';
export { nftInvariantViolations } from './invariants.js';
