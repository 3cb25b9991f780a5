/**
 * The SRC-721 rows of the native operations' wire-format table (docs/nft.md, docs/operations.md; Cosmos
 * `types/msgs.go`): each variant's fields with their bounds. ts/ledger/operations.ts decodes every variant
 * with these rows; the handlers read the typed messages derived from them.
 */
import { type MessageOf, type OperationTable, U64, address, addressOrEmpty, bool, collection, text, uint } from '../kit/spec.js';

export const NFT_OPERATIONS = {
  DeployNft: {
    family: 'nft',
    fields: {
      name: text(64),
      symbol: text(10, 1, /^[A-Za-z0-9]+$/, 'ASCII letters and digits'),
      max_supply: uint(U64),
      royalty_bps: uint(1000n),
      royalty_recipient: address,
      base_uri: text(512, 0),
    },
  },
  MintNft: {
    family: 'nft',
    fields: { collection, to: address, token_id: uint(U64, 1n), token_uri_override: text(512, 0) },
    optional: ['token_id', 'token_uri_override'],
  },
  TransferNft: { family: 'nft', fields: { collection, token_id: uint(U64, 1n), to: address } },
  BurnNft: { family: 'nft', fields: { collection, token_id: uint(U64, 1n) } },
  ApproveNft: {
    family: 'nft',
    fields: { collection, token_id: uint(U64, 1n), spender: addressOrEmpty, expiry_height: uint(U64) },
  },
  ApproveNftOperator: { family: 'nft', fields: { collection, operator: address, approved: bool } },
  FreezeNftCollection: { family: 'nft', fields: { collection } },
  UpdateNftBaseUri: { family: 'nft', fields: { collection, base_uri: text(512, 0) } },
} as const satisfies OperationTable;

export type NftOperation = keyof typeof NFT_OPERATIONS;
export type NftMessage<K extends NftOperation> = MessageOf<(typeof NFT_OPERATIONS)[K]>;
