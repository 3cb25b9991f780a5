/** REST: SRC-721 NFTs (docs/nft.md). Answers come from services/nft-queries.ts; handlers translate shapes. */
import {
  DEFAULT_NFT_PAGE,
  MAX_NFT_PAGE,
  collectionParam,
  nftAddressHistory,
  nftAddressParam,
  nftApprovalsOf,
  nftCollection,
  nftCollectionEvents,
  nftCollectionHolders,
  nftCollectionTokens,
  nftCollections,
  nftCollectionsOf,
  nftOperatorsOf,
  nftToken,
  nftTokenAt,
  nftTokenHistory,
  nftTokensOf,
  submitNftOperation,
  tokenIdParam,
} from '../../services/index.js';
import { NotFoundError } from '../../util/index.js';
import { type JsonSchema, address, arr, bool, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { cacheAt } from '../cache.js';
import { atHeight, atHeightParam, listParams, transactionEnvelope } from './common.js';

const U64 = (1n << 64n) - 1n;
const collectionAddr = str('collection: SRC721_ + 40 hex', { pattern: '^SRC721_[0-9a-fA-F]{40}$' });
const tokenId = int('token id (u64)', { maximum: U64 });
const u64 = (d: string): JsonSchema => int(d, { maximum: U64 });

const collection = obj({
  address: collectionAddr,
  name: str(),
  symbol: str(),
  max_supply: u64('0 = unlimited'),
  total_minted: u64('tokens ever minted'),
  total_burned: u64('tokens burned'),
  total_supply: u64('tokens in existence'),
  holders: int('addresses holding at least one token'),
  deployer: address(),
  royalty_bps: int('0 to 1000'),
  royalty_recipient: address(),
  base_uri: str(),
  frozen: bool('once true: no more mints, base_uri fixed'),
  created_height: int(),
});
const token = obj({
  collection: collectionAddr,
  token_id: tokenId,
  owner: address(),
  token_uri: nullable(str('token_uri_override, else base_uri/{token_id}; null when both are empty')),
  token_uri_override: nullable(str()),
  minted_height: int(),
  last_transfer_height: int(),
  approval: nullable(obj({ spender: address(), expiry_height: u64('0 = no expiry') })),
});
const event = obj(
  {
    type: str('CollectionDeployed, Minted, Transferred, Burned, Approved, ...'),
    txid: S.txidParam,
    block_index: int(),
    tx_index: int(),
  },
  { description: "the event's fields (spec: Events) as strings, beside where it was recorded" },
);
const paging = { total: int(), limit: int(), offset: int() };
const listOf = (key: string, item: JsonSchema, extra: Record<string, JsonSchema> = {}): JsonSchema =>
  obj({ ...extra, [key]: arr(item), ...paging });

const collectionPath = { collection: collectionAddr };
const tokenPath = { collection: collectionAddr, token_id: tokenId };
const addressPath = { addr: S.addressParam };
const query = S.offsetQuery(DEFAULT_NFT_PAGE, MAX_NFT_PAGE);
const list = (req: Parameters<RouteHandler>[1]) => listParams(req.query, DEFAULT_NFT_PAGE, MAX_NFT_PAGE);

type Lister = (ctx: Parameters<RouteHandler>[0], key: string, offset: number, limit: number) => Promise<unknown>;
/** GET route over a paginated list keyed by one path parameter. */
function listRoute(
  path: string,
  summary: string,
  params: Record<string, JsonSchema>,
  parse: (p: Record<string, string>) => string,
  read: Lister,
  response: JsonSchema,
  statuses?: Record<number, string>,
): RouteDef {
  return {
    method: 'GET',
    path,
    tag: 'nft',
    summary,
    params,
    query,
    statuses,
    response,
    handler: async (ctx, req, p) => {
      const key = parse(p);
      const { offset, limit } = list(req);
      return { body: await read(ctx, key, offset, limit) };
    },
  };
}

const unknownCollection = { 404: 'unknown collection' };
const byCollection = (p: Record<string, string>) => collectionParam(p.collection);
const byAddress = (p: Record<string, string>) => nftAddressParam(p.addr);

export const nftRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/nft/collections',
    tag: 'nft',
    summary: 'Every NFT collection, in deployment order',
    query,
    response: listOf('collections', collection),
    handler: async (ctx, req) => {
      const { offset, limit } = list(req);
      return { body: await nftCollections(ctx, offset, limit) };
    },
  },
  {
    method: 'GET',
    path: '/nft/collection/:collection',
    tag: 'nft',
    summary: 'A collection (CollectionInfo)',
    params: collectionPath,
    statuses: unknownCollection,
    response: collection,
    handler: async (ctx, _req, p) => {
      const c = await nftCollection(ctx, collectionParam(p.collection));
      if (!c) throw new NotFoundError('unknown collection');
      return { body: c };
    },
  },
  listRoute(
    '/nft/collection/:collection/tokens',
    "A collection's tokens (mint order; a burn moves the last token into its place)",
    collectionPath,
    byCollection,
    nftCollectionTokens,
    listOf('tokens', token, { collection: collectionAddr }),
    unknownCollection,
  ),
  listRoute(
    '/nft/collection/:collection/holders',
    "A collection's holders with their token count",
    collectionPath,
    byCollection,
    nftCollectionHolders,
    listOf('holders', obj({ address: address(), token_count: int() }), { collection: collectionAddr }),
    unknownCollection,
  ),
  listRoute(
    '/nft/collection/:collection/events',
    "A collection's mint, transfer and burn events, newest first",
    collectionPath,
    byCollection,
    nftCollectionEvents,
    listOf('events', event, { collection: collectionAddr }),
    unknownCollection,
  ),
  {
    method: 'GET',
    path: '/nft/token/:collection/:token_id',
    tag: 'nft',
    summary: 'A token (TokenInfo), after block at_height when given; 404 when never minted or burned',
    description: 'With at_height at a finalized height the answer is immutable (Cache-Control immutable, strong ETag).',
    params: tokenPath,
    query: atHeight,
    statuses: { 404: 'unknown collection or token' },
    response: token,
    handler: async (ctx, req, p) => {
      const c = collectionParam(p.collection);
      const id = tokenIdParam(p.token_id);
      const height = atHeightParam(req.query);
      const t = height === undefined ? await nftToken(ctx, c, id) : await nftTokenAt(ctx, c, id, height);
      if (!t) throw new NotFoundError('unknown token');
      return { body: t, cache: height === undefined ? undefined : cacheAt(ctx, height) };
    },
  },
  {
    method: 'GET',
    path: '/nft/token/:collection/:token_id/history',
    tag: 'nft',
    summary: "A token's events (mint, transfers, approvals, burn), newest first; kept after a burn",
    params: tokenPath,
    query,
    statuses: { 404: 'unknown collection, or a token id never minted' },
    response: listOf('events', event, { collection: collectionAddr, token_id: tokenId }),
    handler: async (ctx, req, p) => {
      const c = collectionParam(p.collection);
      const id = tokenIdParam(p.token_id);
      const { offset, limit } = list(req);
      return { body: await nftTokenHistory(ctx, c, id, offset, limit) };
    },
  },
  listRoute(
    '/nft/address/:addr',
    'Tokens an address owns, across collections',
    addressPath,
    byAddress,
    nftTokensOf,
    listOf('tokens', token, { address: address() }),
  ),
  listRoute(
    '/nft/address/:addr/collections',
    'Collections an address holds tokens of, with its token count in each',
    addressPath,
    byAddress,
    nftCollectionsOf,
    listOf('collections', obj({ collection: collectionAddr, token_count: int() }), { address: address() }),
  ),
  listRoute(
    '/nft/address/:addr/approvals',
    'Tokens the address approved a spender for (approvals that can still authorize)',
    addressPath,
    byAddress,
    nftApprovalsOf,
    listOf(
      'approvals',
      obj({ collection: collectionAddr, token_id: tokenId, spender: address(), expiry_height: u64('0 = no expiry') }),
      {
        address: address(),
      },
    ),
  ),
  listRoute(
    '/nft/address/:addr/operator-approvals',
    'Operators the address approved, per collection',
    addressPath,
    byAddress,
    nftOperatorsOf,
    listOf('operator_approvals', obj({ collection: collectionAddr, operator: address() }), { address: address() }),
  ),
  listRoute(
    '/nft/address/:addr/history',
    'Every NFT event the address took part in, newest first (beyond the spec)',
    addressPath,
    byAddress,
    nftAddressHistory,
    listOf('events', event, { address: address() }),
  ),
  {
    method: 'POST',
    path: '/nft/submit',
    auth: true,
    write: true,
    tag: 'nft',
    summary: 'Submit a signed NFT operation (to the zero address, amount 0, tx.data one of the eight NFT operations)',
    description: 'Same admission as POST /transactions, which accepts NFT operations too; this route refuses anything else.',
    body: S.submitBody,
    response: S.accepted,
    handler: async (ctx, req) => ({ body: { success: true, ...(await submitNftOperation(ctx, transactionEnvelope(req.body))) } }),
  },
];
