/**
 * The SRC-721 read model: records turned into their JSON views (NftReads, over the state alone), and
 * pages of the index's lists (NftLists: a positional read of `limit` entries, then one record each, so
 * an owner of 100,000 tokens pages as fast as an owner of ten). services/nft-queries.ts adds the node
 * context (head state and height, the index, 404s); REST and JSON-RPC only translate shapes.
 */
import type { StateReader } from '../../state/index.js';
import { type Raw20, addressText, collectionText, rawAddress, rawCollection } from './keys.js';
import { type NftIndex, type TokenRef, holderOf, tokenRefCollection, tokenRefId } from './nft-index.js';
import { type CollectionCounters, type CollectionMeta, type TokenRecord, approvalLive, decodeMeta } from './records.js';
import { NftReader } from './store.js';

/** A collection (spec: CollectionInfo). u64 values are bigint, written as exact JSON integers. */
export interface CollectionInfo {
  address: string;
  name: string;
  symbol: string;
  /** 0 = unlimited. */
  max_supply: bigint;
  total_minted: bigint;
  total_burned: bigint;
  /** Tokens in existence: total_minted - total_burned. */
  total_supply: bigint;
  /** Addresses holding at least one token (from the index; absent where only records are read). */
  holders?: number;
  deployer: string;
  royalty_bps: number;
  royalty_recipient: string;
  base_uri: string;
  frozen: boolean;
  created_height: number;
}

/** A token (spec: TokenInfo). */
export interface TokenInfo {
  collection: string;
  token_id: bigint;
  owner: string;
  /** token_uri_override, else base_uri/{token_id}; null when both are empty. */
  token_uri: string | null;
  token_uri_override: string | null;
  minted_height: number;
  last_transfer_height: number;
  /** The approved spender while the approval can still authorize; null otherwise. */
  approval: { spender: string; expiry_height: bigint } | null;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** base_uri/{id}; a base ending in "/" is not doubled; null when the base is empty. */
export function tokenUri(baseUri: string, id: bigint): string | null {
  if (baseUri === '') return null;
  return baseUri.endsWith('/') ? `${baseUri}${id}` : `${baseUri}/${id}`;
}

function collectionInfo(c: Raw20, m: CollectionMeta, k: CollectionCounters, holders?: number): CollectionInfo {
  return {
    address: collectionText(c),
    name: m.name,
    symbol: m.symbol,
    max_supply: m.maxSupply,
    total_minted: k.totalMinted,
    total_burned: k.totalBurned,
    total_supply: k.totalMinted - k.totalBurned,
    ...(holders === undefined ? {} : { holders }),
    deployer: addressText(m.deployer),
    royalty_bps: m.royaltyBps,
    royalty_recipient: addressText(m.royaltyRecipient),
    base_uri: m.baseUri,
    frozen: m.frozen,
    created_height: m.createdHeight,
  };
}

/**
 * Records over one state. `nextHeight` is the height of the next block: an approval shows while it
 * could still authorize there.
 */
export class NftReads {
  readonly nft: NftReader;
  /** Base URIs of the collections read so far (a page of tokens usually shares one). */
  private readonly baseUris = new Map<Raw20, string>();

  constructor(
    state: StateReader,
    readonly nextHeight: number,
  ) {
    this.nft = new NftReader(state);
  }

  private baseUri(c: Raw20): string {
    let uri = this.baseUris.get(c);
    if (uri === undefined) {
      const raw = this.nft.metaRaw(c);
      uri = raw ? decodeMeta(raw).baseUri : '';
      this.baseUris.set(c, uri);
    }
    return uri;
  }

  collectionOf(c: Raw20, holders?: number): CollectionInfo | null {
    const m = this.nft.meta(c);
    const k = this.nft.counters(c);
    return m && k ? collectionInfo(c, m, k, holders) : null;
  }

  /** A live token's view (the record must exist). */
  tokenOf(c: Raw20, id: bigint, t: TokenRecord): TokenInfo {
    return {
      collection: collectionText(c),
      token_id: id,
      owner: addressText(t.owner),
      token_uri: t.uri ?? tokenUri(this.baseUri(c), id),
      token_uri_override: t.uri,
      minted_height: t.mintedHeight,
      last_transfer_height: t.lastTransferHeight,
      approval:
        t.spender !== null && approvalLive(t, this.nextHeight)
          ? { spender: addressText(t.spender), expiry_height: t.expiry }
          : null,
    };
  }

  /** A collection by its `SRC721_…` address (canonical form), or null. */
  collection(address: string): CollectionInfo | null {
    return this.collectionOf(rawCollection(address));
  }

  /** A live token, or null (unknown, or burned). */
  token(collection: string, id: bigint): TokenInfo | null {
    const c = rawCollection(collection);
    const t = this.nft.token(c, id);
    return t && !t.burned ? this.tokenOf(c, id, t) : null;
  }

  /** Whether the id was ever minted in the collection (burned tokens keep their history). */
  tokenEverMinted(collection: string, id: bigint): boolean {
    return this.nft.tokenExists(rawCollection(collection), id);
  }

  /** Whether operator may move every token of owner in the collection. */
  isOperator(collection: string, owner: string, operator: string): boolean {
    return this.nft.isOperator(rawCollection(collection), rawAddress(owner), rawAddress(operator));
  }
}

/** Pages of the index's lists, each entry completed from the records. */
export class NftLists {
  constructor(
    private readonly reads: NftReads,
    private readonly index: NftIndex,
  ) {}

  private tokenAt(ref: TokenRef): TokenInfo {
    const c = tokenRefCollection(ref);
    const id = tokenRefId(ref);
    return this.reads.tokenOf(c, id, this.reads.nft.token(c, id) as TokenRecord);
  }

  private withHolders(c: Raw20): CollectionInfo | null {
    return this.reads.collectionOf(c, this.index.holdersOf(c).size);
  }

  /** A collection with its holder count, or null. */
  collection(address: string): CollectionInfo | null {
    return this.withHolders(rawCollection(address));
  }

  /** Every collection, in deployment order. */
  collections(offset: number, limit: number): Page<CollectionInfo> {
    const total = this.reads.nft.collectionCount();
    const items: CollectionInfo[] = [];
    for (let i = offset; i < total && items.length < limit; i++) {
      const c = this.index.collectionAt(i);
      const info = c === undefined ? null : this.withHolders(c);
      if (info) items.push(info);
    }
    return { items, total };
  }

  /** A collection's tokens by id. */
  collectionTokens(collection: string, offset: number, limit: number): Page<TokenInfo> {
    const c = rawCollection(collection);
    const ids = this.index.collectionTokensOf(c);
    return { items: ids.slice(offset, limit).map((id8) => this.tokenAt(c + id8)), total: ids.size };
  }

  /** A collection's holders with the number of tokens each holds, most first. */
  holders(collection: string, offset: number, limit: number): Page<{ address: string; token_count: number }> {
    const c = rawCollection(collection);
    const list = this.index.holdersOf(c);
    const items = list.slice(offset, limit).map((e) => {
      const owner = holderOf(e);
      return { address: addressText(owner), token_count: this.index.holding(c, owner) };
    });
    return { items, total: list.size };
  }

  /** The tokens an address owns, across collections, by collection then id. */
  tokensOf(owner: string, offset: number, limit: number): Page<TokenInfo> {
    const refs = this.index.ownerTokensOf(rawAddress(owner));
    return { items: refs.slice(offset, limit).map((ref) => this.tokenAt(ref)), total: refs.size };
  }

  /** The collections an address holds tokens of, with the count in each. */
  collectionsOf(owner: string, offset: number, limit: number): Page<{ collection: string; token_count: number }> {
    const o = rawAddress(owner);
    const list = this.index.collectionsOf(o);
    const items = list
      .slice(offset, limit)
      .map((c) => ({ collection: collectionText(c), token_count: this.index.holding(c, o) }));
    return { items, total: list.size };
  }

  /**
   * Tokens the address approved a spender for, whose approval can still authorize. Expired approvals
   * stay in the index until the token moves or is re-approved, so this filters the owner's approvals
   * (as many as it paid for) and pages the result.
   */
  approvalsOf(
    owner: string,
    offset: number,
    limit: number,
  ): Page<{ collection: string; token_id: bigint; spender: string; expiry_height: bigint }> {
    const live: { collection: string; token_id: bigint; spender: string; expiry_height: bigint }[] = [];
    for (const ref of this.index.approvalsOf(rawAddress(owner))) {
      const c = tokenRefCollection(ref);
      const id = tokenRefId(ref);
      const t = this.reads.nft.token(c, id) as TokenRecord;
      if (t.spender !== null && approvalLive(t, this.reads.nextHeight)) {
        live.push({ collection: collectionText(c), token_id: id, spender: addressText(t.spender), expiry_height: t.expiry });
      }
    }
    return { items: live.slice(offset, offset + limit), total: live.length };
  }

  /** The operators the address approved, by collection then operator. */
  operatorsOf(owner: string, offset: number, limit: number): Page<{ collection: string; operator: string }> {
    const list = this.index.operatorsOf(rawAddress(owner));
    const items = list
      .slice(offset, limit)
      .map((e) => ({ collection: collectionText(e.slice(0, 20)), operator: addressText(e.slice(20)) }));
    return { items, total: list.size };
  }
}
