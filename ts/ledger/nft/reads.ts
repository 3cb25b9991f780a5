/**
 * The SRC-721 read model: records turned into their JSON views, and pages of the state's lists (each
 * a count and O(limit) slot reads, so an owner of 100,000 tokens pages as fast as an owner of ten).
 * services/nft-queries.ts adds the node context (head state and height, 404s); REST and JSON-RPC
 * only translate shapes.
 */
import type { StateReader } from '../../state/state-store.js';
import { type Raw20, addressText, collectionText, rawAddress, rawCollection } from './keys.js';
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
  /** Addresses holding at least one token. */
  holders: number;
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

function collectionInfo(c: Raw20, m: CollectionMeta, k: CollectionCounters): CollectionInfo {
  return {
    address: collectionText(c),
    name: m.name,
    symbol: m.symbol,
    max_supply: m.maxSupply,
    total_minted: k.totalMinted,
    total_burned: k.totalBurned,
    total_supply: k.totalMinted - k.totalBurned,
    holders: k.holders,
    deployer: addressText(m.deployer),
    royalty_bps: m.royaltyBps,
    royalty_recipient: addressText(m.royaltyRecipient),
    base_uri: m.baseUri,
    frozen: m.frozen,
    created_height: m.createdHeight,
  };
}

function tokenInfo(c: Raw20, id: bigint, t: TokenRecord, baseUri: string, nextHeight: number): TokenInfo {
  return {
    collection: collectionText(c),
    token_id: id,
    owner: addressText(t.owner),
    token_uri: t.uri ?? tokenUri(baseUri, id),
    token_uri_override: t.uri,
    minted_height: t.mintedHeight,
    last_transfer_height: t.lastTransferHeight,
    approval:
      t.spender !== null && approvalLive(t, nextHeight) ? { spender: addressText(t.spender), expiry_height: t.expiry } : null,
  };
}

function range(total: number, offset: number, limit: number): number[] {
  const out: number[] = [];
  for (let p = offset; p < total && p < offset + limit; p++) out.push(p);
  return out;
}

/**
 * Reads over one state (the head's). `nextHeight` is the height of the next block: an approval shows
 * while it could still authorize there.
 */
export class NftReads {
  private readonly nft: NftReader;
  /** Base URIs of the collections read so far (a page of tokens usually shares one). */
  private readonly baseUris = new Map<Raw20, string>();

  constructor(
    state: StateReader,
    private readonly nextHeight: number,
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

  private collectionRaw(c: Raw20): CollectionInfo | null {
    const m = this.nft.meta(c);
    const k = this.nft.counters(c);
    return m && k ? collectionInfo(c, m, k) : null;
  }

  /** A collection by its `SRC721_…` address (canonical form), or null. */
  collection(address: string): CollectionInfo | null {
    return this.collectionRaw(rawCollection(address));
  }

  /** A live token, or null (unknown, or burned). */
  token(collection: string, id: bigint): TokenInfo | null {
    const c = rawCollection(collection);
    const t = this.nft.token(c, id);
    return t && !t.burned ? tokenInfo(c, id, t, this.baseUri(c), this.nextHeight) : null;
  }

  /** Whether the id was ever minted in the collection (burned tokens keep their history). */
  tokenEverMinted(collection: string, id: bigint): boolean {
    return this.nft.tokenExists(rawCollection(collection), id);
  }

  /** Whether operator may move every token of owner in the collection. */
  isOperator(collection: string, owner: string, operator: string): boolean {
    return this.nft.isOperator(rawCollection(collection), rawAddress(owner), rawAddress(operator));
  }

  /** Every collection, in deployment order. */
  collections(offset: number, limit: number): Page<CollectionInfo> {
    const total = this.nft.collectionCount();
    const items = range(total, offset, limit).map((p) => this.collectionRaw(this.nft.collectionAt(p)) as CollectionInfo);
    return { items, total };
  }

  /** A collection's tokens in list order (mint order; a burn moves the last token into the hole). */
  collectionTokens(collection: string, offset: number, limit: number): Page<TokenInfo> {
    const c = rawCollection(collection);
    const k = this.nft.counters(c);
    const total = k ? Number(k.totalMinted - k.totalBurned) : 0;
    const items = range(total, offset, limit).map((p) => {
      const id = this.nft.collectionTokenAt(c, p);
      return tokenInfo(c, id, this.nft.token(c, id) as TokenRecord, this.baseUri(c), this.nextHeight);
    });
    return { items, total };
  }

  /** A collection's holders with the number of tokens each holds. */
  holders(collection: string, offset: number, limit: number): Page<{ address: string; token_count: number }> {
    const c = rawCollection(collection);
    const total = this.nft.counters(c)?.holders ?? 0;
    const items = range(total, offset, limit).map((p) => {
      const owner = this.nft.holderAt(c, p);
      return { address: addressText(owner), token_count: this.nft.holding(c, owner)?.count ?? 0 };
    });
    return { items, total };
  }

  /** The tokens an address owns, across collections, in list order (acquisition order, holes filled by the last). */
  tokensOf(owner: string, offset: number, limit: number): Page<TokenInfo> {
    const o = rawAddress(owner);
    const total = this.nft.counts(o).tokens;
    const items = range(total, offset, limit).map((p) => {
      const { collection: c, id } = this.nft.ownerTokenAt(o, p);
      return tokenInfo(c, id, this.nft.token(c, id) as TokenRecord, this.baseUri(c), this.nextHeight);
    });
    return { items, total };
  }

  /** The collections an address holds tokens of, with the count in each. */
  collectionsOf(owner: string, offset: number, limit: number): Page<{ collection: string; token_count: number }> {
    const o = rawAddress(owner);
    const total = this.nft.counts(o).collections;
    const items = range(total, offset, limit).map((p) => {
      const c = this.nft.ownerCollectionAt(o, p);
      return { collection: collectionText(c), token_count: this.nft.holding(c, o)?.count ?? 0 };
    });
    return { items, total };
  }

  /**
   * Tokens the address approved a spender for, whose approval can still authorize. Expired approvals
   * stay in the list until the token moves or is re-approved, so this filters the whole list (its
   * length is bounded by the approvals the address paid for) and pages the result.
   */
  approvalsOf(
    owner: string,
    offset: number,
    limit: number,
  ): Page<{ collection: string; token_id: bigint; spender: string; expiry_height: bigint }> {
    const o = rawAddress(owner);
    const n = this.nft.counts(o).approvals;
    const live: { collection: string; token_id: bigint; spender: string; expiry_height: bigint }[] = [];
    for (let p = 0; p < n; p++) {
      const { collection: c, id } = this.nft.ownerApprovalAt(o, p);
      const t = this.nft.token(c, id) as TokenRecord;
      if (t.spender !== null && approvalLive(t, this.nextHeight)) {
        live.push({ collection: collectionText(c), token_id: id, spender: addressText(t.spender), expiry_height: t.expiry });
      }
    }
    return { items: live.slice(offset, offset + limit), total: live.length };
  }

  /** The operators the address approved, per collection. */
  operatorsOf(owner: string, offset: number, limit: number): Page<{ collection: string; operator: string }> {
    const o = rawAddress(owner);
    const total = this.nft.counts(o).operators;
    const items = range(total, offset, limit).map((p) => {
      const { collection, operator } = this.nft.ownerOperatorAt(o, p);
      return { collection: collectionText(collection), operator: addressText(operator) };
    });
    return { items, total };
  }
}
