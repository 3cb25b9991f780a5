/**
 * A bounded cache of committed state values (what the `S` table holds), by bytes, evicted by CLOCK
 * (second chance): a hit only sets a flag, so reads on the execution path cost one map lookup; the
 * hand (a live iterator over the map, which keeps insertion order) clears flags and evicts the first
 * entry it finds unflagged. Absences are cached too (null): a block's new accounts are read once.
 */

/** Map keys are the state key bytes as latin1 strings (as in state-store.ts). */
type KeyStr = string;

interface Slot {
  value: Buffer | null;
  referenced: boolean;
}

/**
 * Bytes counted per entry besides its key and value: the map entry, the slot object, the key string's header,
 * and the value's Buffer, ArrayBuffer and backing store (RocksDB hands each value over in its own allocation).
 */
export const ENTRY_OVERHEAD_BYTES = 240;

const entryBytes = (k: KeyStr, v: Buffer | null): number => ENTRY_OVERHEAD_BYTES + k.length + (v === null ? 0 : v.length);

export class ValueCache {
  private readonly slots = new Map<KeyStr, Slot>();
  private hand: IterableIterator<[KeyStr, Slot]> | null = null;
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(readonly capacityBytes: number) {}

  get size(): number {
    return this.slots.size;
  }

  /** Bytes held, as counted (keys, values and a fixed overhead per entry). */
  get bytes(): number {
    return this.used;
  }

  has(k: KeyStr): boolean {
    return this.slots.has(k);
  }

  /** The value (null: known absent), or undefined when not cached. */
  get(k: KeyStr): Buffer | null | undefined {
    const s = this.slots.get(k);
    if (s === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    s.referenced = true;
    return s.value;
  }

  set(k: KeyStr, v: Buffer | null): void {
    const s = this.slots.get(k);
    if (s !== undefined) {
      this.used += (v === null ? 0 : v.length) - (s.value === null ? 0 : s.value.length);
      s.value = v;
      s.referenced = true;
    } else {
      this.slots.set(k, { value: v, referenced: false });
      this.used += entryBytes(k, v);
    }
    if (this.used > this.capacityBytes) this.evict();
  }

  delete(k: KeyStr): void {
    const s = this.slots.get(k);
    if (s === undefined) return;
    this.slots.delete(k);
    this.used -= entryBytes(k, s.value);
  }

  clear(): void {
    this.slots.clear();
    this.hand = null;
    this.used = 0;
  }

  private evict(): void {
    // Down to 7/8 of the capacity, so a full cache does not run the hand on every insert.
    const target = this.capacityBytes - (this.capacityBytes >> 3);
    while (this.used > target && this.slots.size > 0) {
      this.hand ??= this.slots.entries();
      const next = this.hand.next();
      if (next.done) {
        this.hand = null;
        continue;
      }
      const [k, s] = next.value;
      if (s.referenced) s.referenced = false;
      else {
        this.slots.delete(k);
        this.used -= entryBytes(k, s.value);
      }
    }
  }
}
