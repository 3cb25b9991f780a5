/**
 * Read-only snapshots of the in-memory state for calls that run while blocks keep being applied
 * (eth_call / eth_estimateGas in the call workers, docs/evm.md "Calls off the main thread").
 *
 * Nothing is copied when a snapshot opens: the store keeps, while any snapshot is open, the undo record
 * of every change applied after it (StateStore.applyChanges builds that record anyway). A snapshot read
 * looks for the key in those records, oldest first: the first record holding the key has the value the
 * key had when the snapshot opened; a key no later change touched is read from the live store. Records
 * no open snapshot needs are dropped, so with no snapshot open the cost is one counter increment per
 * applied block.
 */

/** Map keys are the state key bytes as latin1 strings (as in state-store.ts). */
type KeyStr = string;
type Undo = ReadonlyMap<KeyStr, Buffer | undefined>;

/** What a snapshot reads underneath its records: the live store. */
export interface LiveState {
  get(key: KeyStr): Buffer | undefined;
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr>;
}

/** First byte of contract storage keys and their length (NS.storage || address || slot). */
const NS_STORAGE = 0x03;
const STORAGE_KEY_LENGTH = 53;

export class SnapshotError extends Error {
  readonly code = 'SNAPSHOT_RELEASED';
}

/** The undo records of the changes applied since the oldest open snapshot. */
export class SnapshotLog {
  /** Bumped by every applied change set; a snapshot is pinned at the version it opened at. */
  private version = 0;
  /** Ascending by version; only while a snapshot is open. */
  private records: { version: number; undo: Undo }[] = [];
  /** Open snapshots per pinned version. */
  private readonly pins = new Map<number, number>();

  constructor(private readonly live: LiveState) {}

  /** Number of open snapshots (tests, diagnostics). */
  get open(): number {
    let n = 0;
    for (const c of this.pins.values()) n += c;
    return n;
  }

  /** Records kept for open snapshots (tests, diagnostics). */
  get retained(): number {
    return this.records.length;
  }

  /** Called by the store after it applied a change set, with the previous value of every changed key. */
  record(undo: Undo): void {
    this.version++;
    if (this.pins.size > 0) this.records.push({ version: this.version, undo });
  }

  snapshot(): StateSnapshot {
    const v = this.version;
    this.pins.set(v, (this.pins.get(v) ?? 0) + 1);
    return new StateSnapshot(this, v);
  }

  /** @internal */
  release(version: number): void {
    const n = this.pins.get(version);
    if (n === undefined) return;
    if (n > 1) this.pins.set(version, n - 1);
    else this.pins.delete(version);
    // Records at or below the oldest pinned version are not needed by anyone.
    let oldest = Number.POSITIVE_INFINITY;
    for (const p of this.pins.keys()) if (p < oldest) oldest = p;
    let drop = 0;
    while (drop < this.records.length && this.records[drop].version <= oldest) drop++;
    if (drop > 0) this.records = this.records.slice(drop);
  }

  /** @internal Value of key at version. */
  valueAt(version: number, key: KeyStr): Buffer | undefined {
    for (const r of this.records) {
      if (r.version <= version) continue;
      if (r.undo.has(key)) return r.undo.get(key);
    }
    return this.live.get(key);
  }

  /** @internal Storage keys of a contract that held a value at version. */
  storageKeysAt(version: number, owner: string): Set<KeyStr> {
    const candidates = new Set(this.live.storageKeysOf(owner));
    for (const r of this.records) {
      if (r.version <= version) continue;
      for (const k of r.undo.keys()) {
        if (k.length === STORAGE_KEY_LENGTH && k.charCodeAt(0) === NS_STORAGE && k.slice(1, 21) === owner) candidates.add(k);
      }
    }
    const out = new Set<KeyStr>();
    for (const k of candidates) if (this.valueAt(version, k) !== undefined) out.add(k);
    return out;
  }
}

/**
 * The state as it was when the snapshot opened, however many blocks are applied meanwhile. Release it
 * when done: until then the store keeps the undo records of later blocks.
 */
export class StateSnapshot {
  private released = false;

  constructor(
    private readonly log: SnapshotLog,
    readonly version: number,
  ) {}

  get(key: KeyStr): Buffer | undefined {
    if (this.released) throw new SnapshotError('state snapshot read after release');
    return this.log.valueAt(this.version, key);
  }

  /** Keys of every storage slot the contract held (address as 20 raw bytes in latin1). */
  storageKeysOf(addressLatin1: string): ReadonlySet<KeyStr> {
    if (this.released) throw new SnapshotError('state snapshot read after release');
    return this.log.storageKeysAt(this.version, addressLatin1);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.log.release(this.version);
  }
}
