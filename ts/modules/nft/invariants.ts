/**
 * Invariants of the SRC-721 state (Cosmos `keeper/invariants.go`), checked by the module tests after every
 * block and by /chain/validate: every token belongs to a collection, each collection's counters agree with its tokens,
 * deployment sequence numbers are 0..n-1 once each, and an index that followed the changes equals one
 * built afresh from the state. Cost: one pass over the state.
 */
import type { KeyStr } from '../../state/index.js';
import type { Invariant } from '../kit/module.js';
import { TAG, isNftKey, metaKey } from './keys.js';
import { NftIndex } from './nft-index.js';
import { decodeCounters, tokenBurned } from './records.js';

/** The violations found in `entries` (a whole state), empty when consistent; `followed` is checked against a rebuild. */
export function nftInvariantViolations(
  entries: () => Iterable<[KeyStr, Buffer]>,
  read: (k: KeyStr) => Buffer | undefined,
  followed?: NftIndex,
): string[] {
  const bad: string[] = [];
  const live = new Map<string, bigint>();
  const counters = new Map<string, { minted: bigint; burned: bigint; index: number }>();
  let collectionCount = 0;
  for (const [k, v] of entries()) {
    if (!isNftKey(k)) continue;
    const c = k.slice(2, 22);
    switch (k.charCodeAt(1)) {
      case TAG.token:
        if (!read(metaKey(c))) bad.push('a token of a collection that does not exist');
        if (!tokenBurned(v)) live.set(c, (live.get(c) ?? 0n) + 1n);
        break;
      case TAG.counters: {
        const n = decodeCounters(v);
        counters.set(c, { minted: n.totalMinted, burned: n.totalBurned, index: n.index });
        if (!read(metaKey(c))) bad.push('counters of a collection without its fields');
        break;
      }
      case TAG.collectionCount:
        collectionCount = v.readUInt32BE(4);
        break;
    }
  }
  const indexes = new Set<number>();
  for (const [c, n] of counters) {
    if (n.minted - n.burned !== (live.get(c) ?? 0n)) {
      bad.push(`collection: ${n.minted - n.burned} live by its counters, ${live.get(c) ?? 0n} tokens`);
    }
    if (n.index >= collectionCount || indexes.has(n.index))
      bad.push(`collection sequence number ${n.index} repeated or out of range`);
    indexes.add(n.index);
  }
  if (indexes.size !== collectionCount) bad.push(`${collectionCount} collections counted, ${indexes.size} found`);
  if (followed) {
    const fresh = NftIndex.build(entries()).snapshot();
    const kept = followed.snapshot();
    for (const key of new Set([...Object.keys(fresh), ...Object.keys(kept)])) {
      if (JSON.stringify(fresh[key]) !== JSON.stringify(kept[key])) bad.push(`index list ${key} differs from a fresh build`);
    }
  }
  return bad;
}

/** The module's invariants over a whole state (the module tests after every block, /chain/validate). */
export const NFT_INVARIANTS: readonly Invariant[] = [
  {
    name: 'nft/owner-counts-equal-tokens',
    check: (state) =>
      nftInvariantViolations(
        () => state.entries(),
        (k) => state.get(k),
      ),
  },
];
