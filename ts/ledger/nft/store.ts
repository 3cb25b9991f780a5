/**
 * Reads and writes of the SRC-721 state: records by key, and the enumerations (count + slots, removal
 * by moving the last slot into the hole, the moved item's back-pointer updated) that keep every list
 * a read pages through consistent with the records in the same state change.
 */
import type { StateOverlay, StateReader } from '../../state/state-store.js';
import {
  COLLECTION_COUNT_KEY,
  type Raw20,
  collectionSlotKey,
  collectionTokenKey,
  countersKey,
  holderKey,
  holdingKey,
  metaKey,
  operatorKey,
  ownerApprovalKey,
  ownerCollectionKey,
  ownerCountsKey,
  ownerOperatorKey,
  ownerTokenKey,
  tokenKey,
} from './keys.js';
import {
  type CollectionCounters,
  type CollectionMeta,
  EMPTY_COUNTS,
  type Holding,
  type OwnerCounts,
  type TokenRecord,
  decodeCounters,
  decodeCounts,
  decodeHolding,
  decodeMeta,
  decodeToken,
  decodeTokenRef,
  decodeU64,
  encodeCounters,
  encodeCounts,
  encodeHolding,
  encodeToken,
  encodeTokenRef,
  encodeU64,
  withHoldingPosition,
  withTokenPosition,
} from './records.js';

/** Read side: records and list slots (the queries and the operations share it). */
export class NftReader {
  constructor(readonly state: StateReader) {}

  metaRaw(c: Raw20): Buffer | undefined {
    return this.state.get(metaKey(c));
  }

  meta(c: Raw20): CollectionMeta | null {
    const raw = this.metaRaw(c);
    return raw ? decodeMeta(raw) : null;
  }

  counters(c: Raw20): CollectionCounters | null {
    const raw = this.state.get(countersKey(c));
    return raw ? decodeCounters(raw) : null;
  }

  /** The token record, burned ones included (their ids stay taken). */
  token(c: Raw20, id: bigint): TokenRecord | null {
    const raw = this.state.get(tokenKey(c, id));
    return raw ? decodeToken(raw) : null;
  }

  tokenExists(c: Raw20, id: bigint): boolean {
    return this.state.get(tokenKey(c, id)) !== undefined;
  }

  counts(owner: Raw20): OwnerCounts {
    const raw = this.state.get(ownerCountsKey(owner));
    return raw ? decodeCounts(raw) : { ...EMPTY_COUNTS };
  }

  holding(c: Raw20, owner: Raw20): Holding | null {
    const raw = this.state.get(holdingKey(c, owner));
    return raw ? decodeHolding(raw) : null;
  }

  isOperator(c: Raw20, owner: Raw20, operator: Raw20): boolean {
    return this.state.get(operatorKey(c, owner, operator)) !== undefined;
  }

  collectionCount(): number {
    const raw = this.state.get(COLLECTION_COUNT_KEY);
    return raw ? decodeU64(raw) : 0;
  }

  collectionAt(pos: number): Raw20 {
    return this.slot(collectionSlotKey(pos)).toString('latin1');
  }

  ownerTokenAt(owner: Raw20, pos: number): { collection: Raw20; id: bigint } {
    return decodeTokenRef(this.slot(ownerTokenKey(owner, pos)));
  }

  collectionTokenAt(c: Raw20, pos: number): bigint {
    return this.slot(collectionTokenKey(c, pos)).readBigUInt64BE(0);
  }

  holderAt(c: Raw20, pos: number): Raw20 {
    return this.slot(holderKey(c, pos)).toString('latin1');
  }

  ownerCollectionAt(owner: Raw20, pos: number): Raw20 {
    return this.slot(ownerCollectionKey(owner, pos)).toString('latin1');
  }

  ownerOperatorAt(owner: Raw20, pos: number): { collection: Raw20; operator: Raw20 } {
    const b = this.slot(ownerOperatorKey(owner, pos));
    return { collection: b.toString('latin1', 0, 20), operator: b.toString('latin1', 20, 40) };
  }

  ownerApprovalAt(owner: Raw20, pos: number): { collection: Raw20; id: bigint } {
    return decodeTokenRef(this.slot(ownerApprovalKey(owner, pos)));
  }

  protected slot(key: string): Buffer {
    const b = this.state.get(key);
    // A count says the slot exists: a missing one is corrupt state, never a user error.
    if (!b) throw new Error('NFT state: list slot missing');
    return b;
  }
}

/** Write side, on the operation's child overlay. */
export class NftWriter extends NftReader {
  constructor(override readonly state: StateOverlay) {
    super(state);
  }

  putMeta(c: Raw20, raw: Buffer): void {
    this.state.set(metaKey(c), raw);
  }

  putCounters(c: Raw20, counters: CollectionCounters): void {
    this.state.set(countersKey(c), encodeCounters(counters));
  }

  putToken(c: Raw20, id: bigint, t: TokenRecord): void {
    this.state.set(tokenKey(c, id), encodeToken(t));
  }

  putCounts(owner: Raw20, counts: OwnerCounts): void {
    this.state.set(ownerCountsKey(owner), encodeCounts(counts));
  }

  /** Append a collection to the list of all collections; returns its position. */
  addCollection(c: Raw20): number {
    const n = this.collectionCount();
    this.state.set(collectionSlotKey(n), Buffer.from(c, 'latin1'));
    this.state.set(COLLECTION_COUNT_KEY, encodeU64(n + 1));
    return n;
  }

  /** Remove the slot at pos of a list of `count` slots; returns the slot value moved into pos, if any. */
  private removeSlot(slotKey: (pos: number) => string, count: number, pos: number): Buffer | null {
    const last = count - 1;
    let moved: Buffer | null = null;
    if (pos !== last) {
      moved = this.slot(slotKey(last));
      this.state.set(slotKey(pos), moved);
    }
    this.state.delete(slotKey(last));
    return moved;
  }

  private movedTokenPosition(ref: Buffer, list: 'owner' | 'approval', pos: number): void {
    const { collection, id } = decodeTokenRef(ref);
    const key = tokenKey(collection, id);
    this.state.set(key, withTokenPosition(this.slot(key), list, pos));
  }

  /** Add a token to its owner's list; returns its position there. `counts` is the owner's, updated. */
  addOwnerToken(owner: Raw20, counts: OwnerCounts, c: Raw20, id: bigint): number {
    const pos = counts.tokens++;
    this.state.set(ownerTokenKey(owner, pos), encodeTokenRef(c, id));
    return pos;
  }

  removeOwnerToken(owner: Raw20, counts: OwnerCounts, pos: number): void {
    const moved = this.removeSlot((p) => ownerTokenKey(owner, p), counts.tokens--, pos);
    if (moved) this.movedTokenPosition(moved, 'owner', pos);
  }

  /** Add a token to its collection's list (`live` = tokens in it before); returns the position. */
  addCollectionToken(c: Raw20, live: number, id: bigint): number {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64BE(id);
    this.state.set(collectionTokenKey(c, live), b);
    return live;
  }

  removeCollectionToken(c: Raw20, live: number, pos: number): void {
    const moved = this.removeSlot((p) => collectionTokenKey(c, p), live, pos);
    if (!moved) return;
    const key = tokenKey(c, moved.readBigUInt64BE(0));
    this.state.set(key, withTokenPosition(this.slot(key), 'collection', pos));
  }

  /** Record an approval in the owner's list; returns its position. */
  addOwnerApproval(owner: Raw20, counts: OwnerCounts, c: Raw20, id: bigint): number {
    const pos = counts.approvals++;
    this.state.set(ownerApprovalKey(owner, pos), encodeTokenRef(c, id));
    return pos;
  }

  removeOwnerApproval(owner: Raw20, counts: OwnerCounts, pos: number): void {
    const moved = this.removeSlot((p) => ownerApprovalKey(owner, p), counts.approvals--, pos);
    if (moved) this.movedTokenPosition(moved, 'approval', pos);
  }

  /**
   * One more token of collection c for owner: a first one adds the owner to the collection's holders
   * and the collection to the owner's collections.
   */
  holdingAdded(c: Raw20, counters: CollectionCounters, owner: Raw20, counts: OwnerCounts): void {
    const key = holdingKey(c, owner);
    const raw = this.state.get(key);
    if (raw) {
      const h = decodeHolding(raw);
      h.count++;
      this.state.set(key, encodeHolding(h));
      return;
    }
    const holderPos = counters.holders++;
    this.state.set(holderKey(c, holderPos), Buffer.from(owner, 'latin1'));
    const ownerCollectionPos = counts.collections++;
    this.state.set(ownerCollectionKey(owner, ownerCollectionPos), Buffer.from(c, 'latin1'));
    this.state.set(key, encodeHolding({ count: 1, holderPos, ownerCollectionPos }));
  }

  /** One token of collection c fewer for owner: the last one removes it from both lists. */
  holdingRemoved(c: Raw20, counters: CollectionCounters, owner: Raw20, counts: OwnerCounts): void {
    const key = holdingKey(c, owner);
    const h = decodeHolding(this.slot(key));
    if (h.count > 1) {
      h.count--;
      this.state.set(key, encodeHolding(h));
      return;
    }
    this.state.delete(key);
    const movedHolder = this.removeSlot((p) => holderKey(c, p), counters.holders--, h.holderPos);
    if (movedHolder) {
      const k = holdingKey(c, movedHolder.toString('latin1'));
      this.state.set(k, withHoldingPosition(this.slot(k), 'holder', h.holderPos));
    }
    const movedCollection = this.removeSlot((p) => ownerCollectionKey(owner, p), counts.collections--, h.ownerCollectionPos);
    if (movedCollection) {
      const k = holdingKey(movedCollection.toString('latin1'), owner);
      this.state.set(k, withHoldingPosition(this.slot(k), 'ownerCollection', h.ownerCollectionPos));
    }
  }

  /** Approve or revoke operator for all of owner's tokens in c; false when nothing changed. */
  setOperator(c: Raw20, owner: Raw20, operator: Raw20, approved: boolean): boolean {
    const key = operatorKey(c, owner, operator);
    const raw = this.state.get(key);
    if (approved === (raw !== undefined)) return false;
    const counts = this.counts(owner);
    if (approved) {
      const pos = counts.operators++;
      this.state.set(ownerOperatorKey(owner, pos), Buffer.from(c + operator, 'latin1'));
      this.state.set(key, encodeU64(pos));
    } else {
      this.state.delete(key);
      const pos = decodeU64(raw as Buffer);
      const moved = this.removeSlot((p) => ownerOperatorKey(owner, p), counts.operators--, pos);
      if (moved) {
        const k = operatorKey(moved.toString('latin1', 0, 20), owner, moved.toString('latin1', 20, 40));
        this.state.set(k, encodeU64(pos));
      }
    }
    this.putCounts(owner, counts);
    return true;
  }
}
