/** Reads and writes of the SRC-721 records in the state (keys.ts, records.ts). */
import type { StateOverlay, StateReader } from '../../state/index.js';
import { COLLECTION_COUNT_KEY, type Raw20, countersKey, metaKey, operatorKey, tokenKey } from './keys.js';
import {
  type CollectionCounters,
  type CollectionMeta,
  type TokenRecord,
  decodeCounters,
  decodeMeta,
  decodeToken,
  decodeU64,
  encodeCounters,
  encodeToken,
  encodeU64,
} from './records.js';

const APPROVED = Buffer.from([1]);

/** Read side (the operations and the queries share it). */
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

  isOperator(c: Raw20, owner: Raw20, operator: Raw20): boolean {
    return this.state.get(operatorKey(c, owner, operator)) !== undefined;
  }

  collectionCount(): number {
    const raw = this.state.get(COLLECTION_COUNT_KEY);
    return raw ? decodeU64(raw) : 0;
  }
}

/** Write side, on the operation's state (the block overlay, inside the operation's sub-transaction). */
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

  /** The next deployment sequence number (and counts the deployment). */
  nextCollectionIndex(): number {
    const n = this.collectionCount();
    this.state.set(COLLECTION_COUNT_KEY, encodeU64(n + 1));
    return n;
  }

  setOperator(c: Raw20, owner: Raw20, operator: Raw20, approved: boolean): void {
    const key = operatorKey(c, owner, operator);
    if (approved) this.state.set(key, APPROVED);
    else if (this.state.get(key) !== undefined) this.state.delete(key);
  }
}
