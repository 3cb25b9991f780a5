/**
 * SRC-721 NFTs (docs/nft.md): collections at `SRC721_…` addresses, tokens with their approvals, and
 * operator approvals in the authenticated state; the module applies the eight operations and names the
 * index terms of their events. `reads.ts` and `nft-index.ts` are what services/nft-queries reads.
 */
import type { OperationModule } from '../operation-context.js';
import { nftIndexTerms } from './events.js';
import { applyNftOperation } from './operations.js';

export const nftModule: OperationModule = {
  family: 'nft',
  apply: applyNftOperation,
  indexTerms: nftIndexTerms,
};

export { addressTerm, collectionTerm, tokenTerm, NFT_EVENTS, type NftEventType } from './events.js';
export { collectionAddress, COLLECTION_PREFIX } from './keys.js';
export { NftIndex } from './nft-index.js';
export { NftLists, NftReads, tokenUri, type CollectionInfo, type TokenInfo, type Page } from './reads.js';
export { nftInvariantViolations } from './invariants.js';
