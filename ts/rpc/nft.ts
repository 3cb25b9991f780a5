/**
 * JSON-RPC: the SRC-721 reads (spec: native_nftCollection, native_nftToken, native_nftTokensOf,
 * native_nftCollectionsOf). Answers come from services/nft-queries.ts, the same functions REST uses, in
 * the same shapes (u64 values as exact JSON integers).
 */
import {
  collectionParam,
  nftAddressParam,
  nftCollection,
  nftCollectionsOf,
  nftToken,
  nftTokensOf,
  tokenIdParam,
} from '../services/index.js';
import { type RpcTable, invalidParams } from './types.js';

/** Lists answer a page: `{ offset?, limit? }` as the optional last parameter. */
export const DEFAULT_RPC_NFT_PAGE = 100;
export const MAX_RPC_NFT_PAGE = 1000;

function pageOf(raw: unknown): { offset: number; limit: number } {
  const o = (raw ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'offset' && k !== 'limit') throw invalidParams(`unknown paging field ${k}`);
  const int = (v: unknown, name: string, def: number): number => {
    if (v === undefined) return def;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalidParams(`${name} must be a non-negative integer`);
    return n;
  };
  const limit = Math.min(Math.max(1, int(o.limit, 'limit', DEFAULT_RPC_NFT_PAGE)), MAX_RPC_NFT_PAGE);
  return { offset: int(o.offset, 'offset', 0), limit };
}

export const nftMethods: RpcTable = {
  native_nftCollection: {
    params: ['any'],
    handler: (ctx, [c]) => nftCollection(ctx, collectionParam(c)),
  },
  native_nftToken: {
    params: ['any', 'any'],
    handler: (ctx, [c, id]) => nftToken(ctx, collectionParam(c), tokenIdParam(id)),
  },
  native_nftTokensOf: {
    params: ['address', 'object?'],
    handler: async (ctx, [owner, paging]) => {
      const { offset, limit } = pageOf(paging);
      return (await nftTokensOf(ctx, nftAddressParam(owner), offset, limit)).tokens;
    },
  },
  native_nftCollectionsOf: {
    params: ['address', 'object?'],
    handler: async (ctx, [owner, paging]) => {
      const { offset, limit } = pageOf(paging);
      return (await nftCollectionsOf(ctx, nftAddressParam(owner), offset, limit)).collections;
    },
  },
};
