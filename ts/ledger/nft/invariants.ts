/**
 * Invariants of the SRC-721 state (as Cosmos modules keep them): every list agrees with the records
 * it enumerates, both ways. Tests run them after every sequence of operations; a violation names the
 * first broken rule. Cost: one pass over the NFT part of the state.
 */
import type { KeyStr } from '../../state/state-store.js';
import { NS } from '../../state/accounts.js';
import {
  type Raw20,
  TAG,
  collectionTokenKey,
  holderKey,
  holdingKey,
  operatorKey,
  ownerApprovalKey,
  ownerCollectionKey,
  ownerOperatorKey,
  ownerTokenKey,
  tokenKey,
} from './keys.js';
import { decodeCounters, decodeCounts, decodeHolding, decodeToken, decodeTokenRef, decodeU64 } from './records.js';
import { NftReader } from './store.js';

/** Entries of the whole state (StateStore.entries(), or a test's own map). */
type Entries = Iterable<[KeyStr, Buffer]>;

/** Returns the violations found (empty when the state is consistent). */
export function nftInvariantViolations(entries: Entries, read: (k: KeyStr) => Buffer | undefined): string[] {
  const bad: string[] = [];
  const nft = new NftReader({ get: read });
  const perOwnerCollection = new Map<string, number>(); // collection + owner -> live tokens
  const perOwnerApprovals = new Map<Raw20, number>();
  const perCollectionLive = new Map<Raw20, number>();
  const perCollectionHolders = new Map<Raw20, number>();
  const perOwnerCollections = new Map<Raw20, number>();
  const perOwnerOperators = new Map<Raw20, number>();
  const perOwnerTokens = new Map<Raw20, number>();
  const inc = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

  for (const [k, v] of entries) {
    if (k.charCodeAt(0) !== NS.nft) continue;
    const tag = k.charCodeAt(1);
    if (tag === TAG.token) {
      const c = k.slice(2, 22);
      const id = Buffer.from(k.slice(22), 'latin1').readBigUInt64BE(0);
      const t = decodeToken(v);
      if (t.burned) continue;
      inc(perCollectionLive, c);
      inc(perOwnerTokens, t.owner);
      inc(perOwnerCollection, c + t.owner);
      const ref = read(ownerTokenKey(t.owner, t.ownerPos));
      const r = ref && decodeTokenRef(ref);
      if (!r || r.collection !== c || r.id !== id) bad.push(`token ${id}: owner list slot ${t.ownerPos} does not point back`);
      const cs = read(collectionTokenKey(c, t.collectionPos));
      if (!cs || cs.readBigUInt64BE(0) !== id)
        bad.push(`token ${id}: collection list slot ${t.collectionPos} does not point back`);
      if (t.spender !== null) {
        inc(perOwnerApprovals, t.owner);
        const a = read(ownerApprovalKey(t.owner, t.approvalPos));
        const ar = a && decodeTokenRef(a);
        if (!ar || ar.collection !== c || ar.id !== id)
          bad.push(`token ${id}: approval slot ${t.approvalPos} does not point back`);
      }
      if (!read(holdingKey(c, t.owner))) bad.push(`token ${id}: no holding record for its owner`);
    } else if (tag === TAG.holding) {
      const c = k.slice(2, 22);
      const owner = k.slice(22, 42);
      const h = decodeHolding(v);
      inc(perCollectionHolders, c);
      inc(perOwnerCollections, owner);
      if (read(holderKey(c, h.holderPos))?.toString('latin1') !== owner) bad.push('holding: holder slot does not point back');
      if (read(ownerCollectionKey(owner, h.ownerCollectionPos))?.toString('latin1') !== c)
        bad.push('holding: owner-collection slot does not point back');
    } else if (tag === TAG.operator) {
      const owner = k.slice(22, 42);
      inc(perOwnerOperators, owner);
      const slot = read(ownerOperatorKey(owner, decodeU64(v)));
      if (slot?.toString('latin1') !== k.slice(2, 22) + k.slice(42, 62)) bad.push('operator: owner slot does not point back');
    }
  }

  for (const [k, v] of entries) {
    if (k.charCodeAt(0) !== NS.nft) continue;
    const tag = k.charCodeAt(1);
    if (tag === TAG.counters) {
      const c = k.slice(2, 22);
      const n = decodeCounters(v);
      const live = Number(n.totalMinted - n.totalBurned);
      if (live !== (perCollectionLive.get(c) ?? 0))
        bad.push(`collection: ${live} live by its counters, ${perCollectionLive.get(c) ?? 0} tokens`);
      if (n.holders !== (perCollectionHolders.get(c) ?? 0))
        bad.push('collection: holders count differs from the holding records');
      if (read(collectionTokenKey(c, live))) bad.push('collection: token slot beyond the count');
      if (read(holderKey(c, n.holders))) bad.push('collection: holder slot beyond the count');
    } else if (tag === TAG.ownerCounts) {
      const o = k.slice(2, 22);
      const n = decodeCounts(v);
      const expect: [string, number, number, (p: number) => KeyStr][] = [
        ['tokens', n.tokens, perOwnerTokens.get(o) ?? 0, (p) => ownerTokenKey(o, p)],
        ['collections', n.collections, perOwnerCollections.get(o) ?? 0, (p) => ownerCollectionKey(o, p)],
        ['approvals', n.approvals, perOwnerApprovals.get(o) ?? 0, (p) => ownerApprovalKey(o, p)],
        ['operators', n.operators, perOwnerOperators.get(o) ?? 0, (p) => ownerOperatorKey(o, p)],
      ];
      for (const [name, count, actual, slot] of expect) {
        if (count !== actual) bad.push(`owner: ${name} count ${count}, records ${actual}`);
        if (read(slot(count))) bad.push(`owner: ${name} slot beyond the count`);
      }
    } else if (tag === TAG.holding) {
      const c = k.slice(2, 22);
      const owner = k.slice(22, 42);
      const count = decodeHolding(v).count;
      if (count !== (perOwnerCollection.get(c + owner) ?? 0)) bad.push(`holding: count ${count} differs from the tokens owned`);
    }
  }
  // Every slot's target exists (a slot beyond a record would have no back-pointer check).
  for (const [k, v] of entries) {
    if (k.charCodeAt(0) !== NS.nft) continue;
    const tag = k.charCodeAt(1);
    if (tag === TAG.ownerToken || tag === TAG.ownerApproval) {
      const { collection, id } = decodeTokenRef(v);
      const t = nft.token(collection, id);
      if (!t || t.burned) bad.push('owner list slot names a token that does not exist');
    } else if (tag === TAG.ownerOperator) {
      if (!read(operatorKey(v.toString('latin1', 0, 20), k.slice(2, 22), v.toString('latin1', 20, 40))))
        bad.push('operator slot names an operator approval that does not exist');
    } else if (tag === TAG.collectionToken) {
      if (!read(tokenKey(k.slice(2, 22), v.readBigUInt64BE(0)))) bad.push('collection slot names a token that does not exist');
    }
  }
  return bad;
}
