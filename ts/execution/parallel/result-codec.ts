/**
 * The binary form of speculation results (docs/evm.md "Parallel execution"): a worker writes its results into
 * one buffer and posts it as a transferred ArrayBuffer, several results at a time, so the main thread pays
 * neither a structured clone per key and value (~20-30 µs a result as objects, more than its validation) nor a
 * message per transaction. The main thread reads a record's header when it drains its port and the rest only
 * when it reaches that transaction; values it keeps (the writes, logs, return data) are copied out of the batch,
 * so no state value pins a whole batch buffer.
 *
 * Record: kind u8, position u32, body length u32, body. Body of 'ran': reads, writes, the run; 'dropped':
 * reads, reason (utf8); 'miss': `to` (latin1, or absent), missed keys. Entries: count u32, then per entry the
 * key (u16 length, latin1) and the value (i32 length, -1 for absent, bytes).
 */
import type { KeyStr } from '../../state/index.js';
import type { LogTuple, SpeculatedRun, SpeculationResult, StateEntries } from './protocol.js';

const KIND = { ran: 1, dropped: 2, miss: 3 } as const;
const HEADER = 9;

type Recorded = Exclude<SpeculationResult, { kind: 'end' }>;

/** Appends results to a growing buffer; `flush` hands the bytes written so far over for transfer. */
export class ResultWriter {
  private buf = Buffer.allocUnsafeSlow(16 * 1024);
  private at = 0;
  /** Results written since the last flush. */
  count = 0;

  private ensure(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  private u8(v: number): void {
    this.ensure(1);
    this.buf[this.at++] = v;
  }

  private u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.at);
    this.at += 4;
  }

  private i32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32LE(v, this.at);
    this.at += 4;
  }

  private latin1(s: string): void {
    this.ensure(2 + s.length);
    this.buf.writeUInt16LE(s.length, this.at);
    this.at += 2 + this.buf.write(s, this.at + 2, 'latin1');
  }

  private bytes(b: Uint8Array | null): void {
    if (b === null) {
      this.i32(-1);
      return;
    }
    this.i32(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  private utf8(s: string | null): void {
    this.bytes(s === null ? null : Buffer.from(s, 'utf8'));
  }

  private bigint(v: bigint): void {
    const hex = v.toString(16);
    this.bytes(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
  }

  private entries(list: StateEntries): void {
    this.u32(list.size);
    for (const [k, v] of list) {
      this.latin1(k);
      this.bytes(v ?? null);
    }
  }

  /** Entries alone (a task's pre-block values), not a result: read back with ResultReader.everyEntry. */
  addEntries(list: StateEntries): void {
    this.entries(list);
  }

  private run(r: SpeculatedRun): void {
    this.bigint(r.amountSpent);
    this.bigint(r.totalGasSpent);
    this.utf8(r.exceptionError);
    this.bytes(r.returnValue);
    this.u32(r.logs.length);
    for (const [address, topics, data] of r.logs) {
      this.bytes(address);
      this.u32(topics.length);
      for (const t of topics) this.bytes(t);
      this.bytes(data);
    }
    this.bytes(r.createdAddress);
  }

  add(r: Recorded): void {
    this.u8(KIND[r.kind]);
    this.u32(r.position);
    const lengthAt = this.at;
    this.u32(0);
    if (r.kind === 'miss') {
      this.u8(r.to === null ? 0 : 1);
      if (r.to !== null) this.latin1(r.to);
      this.u32(r.keys.length);
      for (const k of r.keys) this.latin1(k);
    } else {
      this.entries(r.reads);
      if (r.kind === 'ran') {
        this.entries(r.writes);
        this.run(r.run);
      } else this.utf8(r.reason);
    }
    this.buf.writeUInt32LE(this.at - lengthAt - 4, lengthAt);
    this.count++;
  }

  /** What was written since the last flush, as a buffer of its own (transferable), or null if no result was. */
  flush(): ArrayBuffer | null {
    if (this.at === 0) return null;
    const out = this.buf.buffer.slice(this.buf.byteOffset, this.buf.byteOffset + this.at);
    this.at = 0;
    this.count = 0;
    return out;
  }
}

/** A result as the main thread keeps it until it reaches its transaction: decoded on demand. */
export interface EncodedResult {
  kind: Recorded['kind'];
  position: number;
  /** The record's body. */
  body: Buffer;
}

const KINDS = [undefined, 'ran', 'dropped', 'miss'] as const;

/** The records of one posted batch. */
export function* readBatch(batch: ArrayBuffer): IterableIterator<EncodedResult> {
  const b = Buffer.from(batch);
  for (let at = 0; at + HEADER <= b.length; ) {
    const kind = KINDS[b[at]];
    const position = b.readUInt32LE(at + 1);
    const length = b.readUInt32LE(at + 5);
    if (kind === undefined) throw new Error(`speculation result of unknown kind ${b[at]}`);
    yield { kind, position, body: b.subarray(at + HEADER, at + HEADER + length) };
    at += HEADER + length;
  }
}

/** Reads a record's body in order; values are views into it unless copied. */
export class ResultReader {
  private at = 0;
  constructor(private readonly b: Buffer) {}

  u8(): number {
    return this.b[this.at++];
  }

  u32(): number {
    const v = this.b.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  latin1(): string {
    const n = this.b.readUInt16LE(this.at);
    this.at += 2 + n;
    return this.b.toString('latin1', this.at - n, this.at);
  }

  /** A view of the next value (null: absent). */
  view(): Buffer | null {
    const n = this.b.readInt32LE(this.at);
    this.at += 4;
    if (n < 0) return null;
    this.at += n;
    return this.b.subarray(this.at - n, this.at);
  }

  /** The next value, copied out of the batch as a plain Uint8Array (as the VM hands its outputs over). */
  copy(): Uint8Array | null {
    const v = this.view();
    return v === null ? null : new Uint8Array(v);
  }

  bigint(): bigint {
    const v = this.view() as Buffer;
    return v.length === 0 ? 0n : BigInt(`0x${v.toString('hex')}`);
  }

  utf8(): string | null {
    const v = this.view();
    return v === null ? null : v.toString('utf8');
  }

  /** Calls `each` per entry (key, value view), stopping at the first false; true if it never did. */
  everyEntry(each: (key: KeyStr, value: Buffer | null) => boolean): boolean {
    const n = this.u32();
    for (let i = 0; i < n; i++) if (!each(this.latin1(), this.view())) return false;
    return true;
  }

  run(): SpeculatedRun {
    const amountSpent = this.bigint();
    const totalGasSpent = this.bigint();
    const exceptionError = this.utf8();
    const returnValue = this.copy() as Uint8Array;
    const logs: LogTuple[] = [];
    for (let i = this.u32(); i > 0; i--) {
      const address = this.copy() as Uint8Array;
      const topics: Uint8Array[] = [];
      for (let j = this.u32(); j > 0; j--) topics.push(this.copy() as Uint8Array);
      logs.push([address, topics, this.copy() as Uint8Array]);
    }
    return { amountSpent, totalGasSpent, exceptionError, returnValue, logs, createdAddress: this.copy() };
  }
}

/** A miss record's `to` and keys. */
export function readMiss(body: Buffer): { to: string | null; keys: KeyStr[] } {
  const r = new ResultReader(body);
  const to = r.u8() === 1 ? r.latin1() : null;
  const keys: KeyStr[] = [];
  for (let n = r.u32(); n > 0; n--) keys.push(r.latin1());
  return { to, keys };
}
