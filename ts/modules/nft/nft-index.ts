/**
 * The lists the NFT reads page through, derived from the records in the state: an owner's tokens, a
 * collection's tokens and holders, the collections an address holds, its approvals and its operators,
 * and every collection in deployment order. Not part of the state root (it is an index, as a block
 * explorer's tables are): it is built by one pass over the state and then follows every committed
 * change of an NFT key (old value -> new value), so it always equals a fresh build of the head state.
 *
 * Orders are fixed by content, not history, so a page is the same on every node and after a restart:
 * tokens by (collection, id), holders by token count (most first) then address, collections of an
 * address, approvals and operators by collection then id or address.
 */
import type { KeyStr } from '../../state/index.js';
import { type Raw20, TAG, isNftKey } from './keys.js';
import { decodeCounters, tokenApproved, tokenBurned, tokenOwner } from './records.js';
import { SortedList } from './sorted-list.js';

/** A token reference in the lists: collection (20 bytes) + id (8 bytes BE), latin1. */
export type TokenRef = string;
export const tokenRefCollection = (ref: TokenRef): Raw20 => ref.slice(0, 20);
export const tokenRefId = (ref: TokenRef): bigint => Buffer.from(ref.slice(20), 'latin1').readBigUInt64BE(0);

/** Holders sort by count, most first: the entry starts with 2^48 - 1 - count as 6 big-endian latin1 digits. */
function holderEntry(count: number, owner: Raw20): string {
  let n = 2 ** 48 - 1 - count;
  let digits = '';
  for (let i = 0; i < 6; i++, n = Math.floor(n / 256)) digits = String.fromCharCode(n % 256) + digits;
  return digits + owner;
}
const EMPTY = new SortedList();

export class NftIndex {
  private readonly ownerTokens = new Map<Raw20, SortedList>();
  private readonly collectionTokens = new Map<Raw20, SortedList>();
  /** collection -> owner -> tokens held. */
  private readonly holdings = new Map<Raw20, Map<Raw20, number>>();
  private readonly holders = new Map<Raw20, SortedList>();
  private readonly ownerCollections = new Map<Raw20, SortedList>();
  private readonly approvals = new Map<Raw20, SortedList>();
  private readonly operators = new Map<Raw20, SortedList>();
  /** Collections by deployment sequence number. */
  private readonly collections = new Map<number, Raw20>();

  /** An index of the NFT records among `entries` (a whole state). */
  static build(entries: Iterable<[KeyStr, Buffer]>): NftIndex {
    const index = new NftIndex();
    for (const [k, v] of entries) index.apply(k, undefined, v);
    return index;
  }

  /** One state key changed from `before` to `after` (undefined = absent); keys of other namespaces are ignored. */
  apply(key: KeyStr, before: Buffer | undefined, after: Buffer | undefined): void {
    if (!isNftKey(key)) return;
    const c = key.slice(2, 22);
    switch (key.charCodeAt(1)) {
      case TAG.token:
        this.token(key.slice(2, 30), before, after);
        break;
      case TAG.operator: {
        const owner = key.slice(22, 42);
        const entry = c + key.slice(42, 62);
        if (before && !after) this.remove(this.operators, owner, entry);
        if (after && !before) list(this.operators, owner).add(entry);
        break;
      }
      case TAG.counters:
        if (before && !after) this.collections.delete(decodeCounters(before).index);
        if (after && !before) this.collections.set(decodeCounters(after).index, c);
        break;
    }
  }

  /** A token record changed: move what differs (a transfer touches the owner lists and holder counts only). */
  private token(ref: TokenRef, before: Buffer | undefined, after: Buffer | undefined): void {
    const was = before !== undefined && !tokenBurned(before) ? before : undefined;
    const now = after !== undefined && !tokenBurned(after) ? after : undefined;
    const c = ref.slice(0, 20);
    if ((was === undefined) !== (now === undefined)) {
      if (now) list(this.collectionTokens, c).add(ref.slice(20));
      else this.remove(this.collectionTokens, c, ref.slice(20));
    }
    const from = was && tokenOwner(was);
    const to = now && tokenOwner(now);
    if (from !== to) {
      if (from) {
        this.remove(this.ownerTokens, from, ref);
        this.changeHolding(c, from, -1);
      }
      if (to) {
        list(this.ownerTokens, to).add(ref);
        this.changeHolding(c, to, +1);
      }
    }
    const approvedBy = was && tokenApproved(was) ? from : undefined;
    const approvedNow = now && tokenApproved(now) ? to : undefined;
    if (approvedBy !== approvedNow) {
      if (approvedBy) this.remove(this.approvals, approvedBy, ref);
      if (approvedNow) list(this.approvals, approvedNow).add(ref);
    }
  }

  private changeHolding(c: Raw20, owner: Raw20, delta: 1 | -1): void {
    let counts = this.holdings.get(c);
    if (!counts) this.holdings.set(c, (counts = new Map()));
    const was = counts.get(owner) ?? 0;
    const now = was + delta;
    if (was > 0) this.remove(this.holders, c, holderEntry(was, owner));
    if (now > 0) {
      list(this.holders, c).add(holderEntry(now, owner));
      counts.set(owner, now);
    } else {
      counts.delete(owner);
      if (counts.size === 0) this.holdings.delete(c);
    }
    if (was === 0 && now > 0) list(this.ownerCollections, owner).add(c);
    if (was > 0 && now <= 0) this.remove(this.ownerCollections, owner, c);
  }

  private remove(lists: Map<Raw20, SortedList>, key: Raw20, entry: string): void {
    const l = lists.get(key);
    if (!l) return;
    l.delete(entry);
    if (l.size === 0) lists.delete(key);
  }

  /** Tokens an address owns (TokenRefs). */
  ownerTokensOf(owner: Raw20): SortedList {
    return this.ownerTokens.get(owner) ?? EMPTY;
  }

  /** Live token ids of a collection (8-byte BE latin1). */
  collectionTokensOf(c: Raw20): SortedList {
    return this.collectionTokens.get(c) ?? EMPTY;
  }

  /** A collection's holders, most tokens first: entries decode with holderOf. */
  holdersOf(c: Raw20): SortedList {
    return this.holders.get(c) ?? EMPTY;
  }

  holding(c: Raw20, owner: Raw20): number {
    return this.holdings.get(c)?.get(owner) ?? 0;
  }

  collectionsOf(owner: Raw20): SortedList {
    return this.ownerCollections.get(owner) ?? EMPTY;
  }

  /** Tokens the owner approved a spender for (expired approvals included: reads filter them). */
  approvalsOf(owner: Raw20): SortedList {
    return this.approvals.get(owner) ?? EMPTY;
  }

  /** collection + operator entries of the owner's operator approvals. */
  operatorsOf(owner: Raw20): SortedList {
    return this.operators.get(owner) ?? EMPTY;
  }

  /** The collection deployed with sequence number `index`. */
  collectionAt(index: number): Raw20 | undefined {
    return this.collections.get(index);
  }

  /** Every list in a canonical form (tests compare a followed index with a fresh build). */
  snapshot(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');
    const dump = (name: string, m: Map<string, SortedList>) => {
      for (const [k, l] of m) out[`${name}:${hex(k)}`] = [...l].map(hex);
    };
    dump('ownerTokens', this.ownerTokens);
    dump('collectionTokens', this.collectionTokens);
    dump('holders', this.holders);
    dump('ownerCollections', this.ownerCollections);
    dump('approvals', this.approvals);
    dump('operators', this.operators);
    out.holdings = [...this.holdings].flatMap(([c, m]) => [...m].map(([o, n]) => `${hex(c + o)}=${n}`)).sort();
    out.collections = [...this.collections].sort((a, b) => a[0] - b[0]).map(([i, c]) => `${i}=${hex(c)}`);
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** Owner of a holders-list entry. */
export const holderOf = (entry: string): Raw20 => entry.slice(6);

function list(lists: Map<Raw20, SortedList>, key: Raw20): SortedList {
  let l = lists.get(key);
  if (!l) lists.set(key, (l = new SortedList()));
  return l;
}
