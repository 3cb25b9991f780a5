/**
 * SRC-721 queries and the NFT submission (docs/nft.md): one function per read, shared by REST
 * (`api/routes/nft.ts`) and JSON-RPC (`rpc/nft.ts`), which only translate shapes. Reads see the head
 * state; lists are pages of the state's own enumerations; feeds come from the native event index.
 */
import {
  type CollectionInfo,
  NftLists,
  NftReads,
  type Page,
  type TokenInfo,
  addressTerm,
  collectionTerm,
  tokenTerm,
} from '../modules/index.js';
import { NFT_COLLECTION_RE, decodeOperation, parseSignedTransaction, ZERO_ADDRESS } from '../ledger/index.js';
import { InvalidParamsError, NotFoundError, isAddress } from '../util/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { indexedChain } from '../indexes/index.js';
import { nftIndexOf } from '../indexes/index.js';

export type { CollectionInfo, TokenInfo } from '../modules/index.js';

export const DEFAULT_NFT_PAGE = 20;
export const MAX_NFT_PAGE = 100;
const MAX_TOKEN_ID = (1n << 64n) - 1n;

/** A page of a list, with its paging echoed back. */
export type ListPage<K extends string, T> = { [key in K]: T[] } & { total: number; limit: number; offset: number };

/** `SRC721_` + 40 hex (any case) -> canonical form; a clear 400 otherwise. */
export function collectionParam(raw: unknown): string {
  if (typeof raw !== 'string' || !NFT_COLLECTION_RE.test(raw)) {
    throw new InvalidParamsError('invalid collection: expected SRC721_ + 40 hex characters');
  }
  return `SRC721_${raw.slice(7).toLowerCase()}`;
}

/** A token id: a decimal u64 (a JSON integer or decimal string; `0x` hex too). 0 is well-formed but never minted. */
export function tokenIdParam(raw: unknown): bigint {
  let id: bigint | null = null;
  if (typeof raw === 'bigint') id = raw;
  else if (typeof raw === 'number' && Number.isSafeInteger(raw)) id = BigInt(raw);
  else if (typeof raw === 'string' && (/^(0|[1-9][0-9]{0,19})$/.test(raw) || /^0x[0-9a-fA-F]{1,16}$/.test(raw))) id = BigInt(raw);
  if (id === null || id < 0n || id > MAX_TOKEN_ID) {
    throw new InvalidParamsError('invalid token id: expected an integer from 0 to 18446744073709551615');
  }
  return id;
}

/** An owner or operator address -> lowercase; a clear 400 otherwise. */
export function nftAddressParam(raw: unknown): string {
  if (!isAddress(raw)) throw new InvalidParamsError('invalid address: expected 0x + 40 hex characters');
  return raw.toLowerCase();
}

/** Records of the head state (after any block being applied has settled). */
async function headReads(ctx: ChainContext): Promise<NftReads> {
  await ctx.chain.settled();
  return new NftReads(ctx.chain.state, ctx.chain.height + 1);
}

/** Lists of the head state: the index and the records, read in the same tick. */
async function headLists(ctx: ChainContext): Promise<NftLists> {
  const index = await nftIndexOf(indexedChain(ctx.chain));
  return new NftLists(new NftReads(ctx.chain.state, ctx.chain.height + 1), index);
}

function page<K extends string, T>(key: K, p: Page<T>, offset: number, limit: number): ListPage<K, T> {
  return { [key]: p.items, total: p.total, limit, offset } as ListPage<K, T>;
}

async function knownCollection(ctx: ChainContext, collection: string): Promise<NftLists> {
  const lists = await headLists(ctx);
  if (!lists.collection(collection)) throw new NotFoundError('unknown collection');
  return lists;
}

/** A collection (with its holder count), or null when none lives at the address. */
export async function nftCollection(ctx: ChainContext, collection: string): Promise<CollectionInfo | null> {
  return (await headLists(ctx)).collection(collection);
}

/** A live token, or null (never minted, or burned). */
export async function nftToken(ctx: ChainContext, collection: string, id: bigint): Promise<TokenInfo | null> {
  return (await headReads(ctx)).token(collection, id);
}

/** Every collection, in deployment order. */
export async function nftCollections(
  ctx: ChainContext,
  offset: number,
  limit: number,
): Promise<ListPage<'collections', CollectionInfo>> {
  return page('collections', (await headLists(ctx)).collections(offset, limit), offset, limit);
}

/** A collection's tokens (404 for an unknown collection). */
export async function nftCollectionTokens(
  ctx: ChainContext,
  collection: string,
  offset: number,
  limit: number,
): Promise<ListPage<'tokens', TokenInfo> & { collection: string }> {
  const lists = await knownCollection(ctx, collection);
  return { collection, ...page('tokens', lists.collectionTokens(collection, offset, limit), offset, limit) };
}

/** A collection's holders with their token counts (404 for an unknown collection). */
export async function nftCollectionHolders(
  ctx: ChainContext,
  collection: string,
  offset: number,
  limit: number,
): Promise<ListPage<'holders', { address: string; token_count: number }> & { collection: string }> {
  const lists = await knownCollection(ctx, collection);
  return { collection, ...page('holders', lists.holders(collection, offset, limit), offset, limit) };
}

/** One entry of an event feed: the event's type and fields, and where it was recorded. */
export interface NftEventEntry {
  type: string;
  txid: string;
  block_index: number;
  tx_index: number;
  [field: string]: string | number;
}

async function feed(ctx: ChainContext, term: string, offset: number, limit: number): Promise<ListPage<'events', NftEventEntry>> {
  const blocks = ctx.chain.blocks;
  const rows = await blocks.indexedEvents(term, offset, limit);
  const events = rows.map((r) => ({
    ...r.event.fields,
    type: r.event.type,
    txid: r.txid,
    block_index: r.height,
    tx_index: r.txIndex,
  }));
  return { events, total: blocks.eventIndex.count(term), limit, offset };
}

/** Lengths of the NFT event feeds (a collection's, an address's) without reading any event. */
export const nftCollectionEventCount = (ctx: ChainContext, collection: string): number =>
  ctx.chain.blocks.eventIndex.count(collectionTerm(collection));
export const nftAddressEventCount = (ctx: ChainContext, address: string): number =>
  ctx.chain.blocks.eventIndex.count(addressTerm(address));

/** A collection's mint, transfer and burn events, newest first (404 for an unknown collection). */
export async function nftCollectionEvents(
  ctx: ChainContext,
  collection: string,
  offset: number,
  limit: number,
): Promise<ListPage<'events', NftEventEntry> & { collection: string }> {
  await knownCollection(ctx, collection);
  return { collection, ...(await feed(ctx, collectionTerm(collection), offset, limit)) };
}

/**
 * A token's history (mint, transfers, approvals, burn), newest first. A burned token keeps its history;
 * 404 only for a token that was never minted (or an unknown collection).
 */
export async function nftTokenHistory(
  ctx: ChainContext,
  collection: string,
  id: bigint,
  offset: number,
  limit: number,
): Promise<ListPage<'events', NftEventEntry> & { collection: string; token_id: bigint }> {
  await knownCollection(ctx, collection);
  if (!(await headReads(ctx)).tokenEverMinted(collection, id)) throw new NotFoundError('unknown token');
  return { collection, token_id: id, ...(await feed(ctx, tokenTerm(collection, id), offset, limit)) };
}

/** Every NFT event an address took part in, newest first. */
export async function nftAddressHistory(
  ctx: ChainContext,
  address: string,
  offset: number,
  limit: number,
): Promise<ListPage<'events', NftEventEntry> & { address: string }> {
  return { address, ...(await feed(ctx, addressTerm(address), offset, limit)) };
}

/** The tokens an address owns, across collections. */
export async function nftTokensOf(
  ctx: ChainContext,
  owner: string,
  offset: number,
  limit: number,
): Promise<ListPage<'tokens', TokenInfo> & { address: string }> {
  return { address: owner, ...page('tokens', (await headLists(ctx)).tokensOf(owner, offset, limit), offset, limit) };
}

/** The collections an address holds tokens of, with its token count in each. */
export async function nftCollectionsOf(
  ctx: ChainContext,
  owner: string,
  offset: number,
  limit: number,
): Promise<ListPage<'collections', { collection: string; token_count: number }> & { address: string }> {
  return { address: owner, ...page('collections', (await headLists(ctx)).collectionsOf(owner, offset, limit), offset, limit) };
}

/** Tokens the address approved a spender for (approvals that can still authorize). */
export async function nftApprovalsOf(ctx: ChainContext, owner: string, offset: number, limit: number) {
  return { address: owner, ...page('approvals', (await headLists(ctx)).approvalsOf(owner, offset, limit), offset, limit) };
}

/** Operators the address approved, per collection. */
export async function nftOperatorsOf(ctx: ChainContext, owner: string, offset: number, limit: number) {
  return {
    address: owner,
    ...page('operator_approvals', (await headLists(ctx)).operatorsOf(owner, offset, limit), offset, limit),
  };
}

/**
 * POST /nft/submit: a signed NFT operation (to the zero address, amount 0, tx.data one of the eight
 * NFT variants), then the same admission as POST /transactions.
 */
export async function submitNftOperation(
  ctx: NodeContext,
  raw: unknown,
): Promise<{ txid: string; status: 'pending_in_mempool' }> {
  const tx = parseSignedTransaction(raw);
  if (tx.to_address.toLowerCase() !== ZERO_ADDRESS || tx.amount !== 0n) {
    throw new InvalidParamsError('an NFT operation is sent to the zero address with amount 0');
  }
  let family: string;
  try {
    family = decodeOperation(tx.data).family;
  } catch (err) {
    throw new InvalidParamsError((err as Error).message);
  }
  if (family !== 'nft') throw new InvalidParamsError('tx.data is not an NFT operation (use POST /transactions)');
  await ctx.admission.submit(tx);
  return { txid: tx.txid, status: 'pending_in_mempool' };
}
