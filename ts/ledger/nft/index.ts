/**
 * SRC-721 NFTs. The module is not active yet (ledger/rules.ts refuses NFT operations at admission and in
 * blocks), so apply is never reached; the NFT issue fills it in.
 */
import { OperationFailed, type OperationModule } from '../operation-context.js';

export const nftModule: OperationModule = {
  family: 'nft',
  apply: () => {
    throw new OperationFailed('NFT operations are not active on this chain yet');
  },
  indexTerms: () => [],
};
