/**
 * The on-disk tables of the state index (indexes/state-index.ts): every ordering the rich list, token
 * holder lists and staking lists read, kept in RocksDB under the `O` prefix (storage/keys.ts) so a node
 * with millions of accounts holds none of them in the JS heap. Layout (docs/storage.md, "State indexes"):
 *
 *   'O' + table u8 + ...
 *
 * Tables (20-byte ids are the raw bytes of the state key; amounts big-endian):
 *   account       addr20 -> balance (32 bytes, as the account record has it; every record, zero balances too)
 *   accountRank   (2^256-1 - balance) 32 bytes + addr20 -> ''   (non-zero balances: largest first, then address)
 *   token         contract20 -> ''                             (deployed SRC-20 tokens)
 *   holding       contract20 + holder20 -> amount (16 bytes, as the state has it; non-zero only)
 *   holderRank    contract20 + (2^128-1 - amount) 16 bytes + holder20 -> ''
 *   holderStats   contract20 -> holders u64 + total u128
 *   accountTokens holder20 + contract20 -> ''
 *   delegation    validator20 + delegator20 -> ''
 *   unbonding     delegator20 + complete_epoch u64 + validator20 -> ''
 *
 * A rebuild first deletes the whole table with one range deletion (RocksDB DeleteRange), so no stale row
 * is read and no tombstone per row is left behind. The marker (meta key `state-index`) says whether the
 * tables are complete, the height they describe and the totals.
 */
import { type KvStore, metaKey, P, prefixEnd } from '../storage/index.js';
import { bytesToBig } from '../util/index.js';

export const T = {
  account: 1,
  accountRank: 2,
  token: 3,
  holding: 4,
  holderRank: 5,
  holderStats: 6,
  accountTokens: 7,
  delegation: 8,
  unbonding: 9,
} as const;

/** Bumped when the layout changes: an index of another format is rebuilt. */
export const INDEX_FORMAT = 1;
export const MARKER_KEY = metaKey('state-index');
const MARKER_BYTES = 70;
const NO_HEIGHT = 0xffff_ffff_ffff;

/** Totals the index keeps beside its tables (in the marker, written with every update). */
export interface IndexTotals {
  /** Account records, zero balances included. */
  accountRecords: number;
  /** Accounts with a non-zero balance. */
  nonZero: number;
  /** Sum of all account balances (wei). */
  total: bigint;
  tokens: number;
}

export interface IndexMarker {
  format: number;
  /** The tables are complete (a rebuild finished). */
  complete: boolean;
  /** Includes dev-chain writes not yet in a block: not the state of any height, rebuilt at the next start. */
  dirty: boolean;
  /** The height whose committed state the index describes (-1: none). */
  height: number;
  totals: IndexTotals;
}

export const emptyTotals = (): IndexTotals => ({ accountRecords: 0, nonZero: 0, total: 0n, tokens: 0 });

export function encodeMarker(m: IndexMarker): Buffer {
  const b = Buffer.alloc(MARKER_BYTES);
  b[0] = m.format;
  b[1] = (m.complete ? 1 : 0) | (m.dirty ? 2 : 0);
  b.writeUIntBE(m.height < 0 ? NO_HEIGHT : m.height, 8, 6);
  b.writeUIntBE(m.totals.accountRecords, 14, 6);
  b.writeUIntBE(m.totals.nonZero, 20, 6);
  b.writeUIntBE(m.totals.tokens, 26, 6);
  fixedBytes(m.totals.total, 32).copy(b, 38);
  return b;
}

export function decodeMarker(b: Buffer | undefined): IndexMarker | null {
  if (!b || b.length !== MARKER_BYTES) return null;
  const height = b.readUIntBE(8, 6);
  return {
    format: b[0],
    complete: (b[1] & 1) !== 0,
    dirty: (b[1] & 2) !== 0,
    height: height === NO_HEIGHT ? -1 : height,
    totals: {
      accountRecords: b.readUIntBE(14, 6),
      nonZero: b.readUIntBE(20, 6),
      tokens: b.readUIntBE(26, 6),
      total: bytesToBig(b.subarray(38, 70)),
    },
  };
}

/** Big-endian, exactly `width` bytes (the value is known to fit). */
function fixedBytes(v: bigint, width: number): Buffer {
  const b = Buffer.alloc(width);
  for (let i = width - 8; i >= 0; i -= 8, v >>= 64n) b.writeBigUInt64BE(v & 0xffff_ffff_ffff_ffffn, i);
  return b;
}

const MAX = { 32: (1n << 256n) - 1n, 16: (1n << 128n) - 1n } as const;

/** The amount of a rank key's rank bytes (the amount's bytes inverted: 2^(8 width) - 1 - amount). */
export const amountOfRank = (rank: Buffer, width: 16 | 32): bigint => MAX[width] - bytesToBig(rank);
export const amountOf = bytesToBig;

export function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUIntBE(n, 2, 6);
  return b;
}

/** Holder count and total of one token (holderStats row). */
export interface HolderStats {
  holders: number;
  total: bigint;
}

export function encodeStats(s: HolderStats): Buffer {
  return Buffer.concat([u64(s.holders), fixedBytes(s.total, 16)]);
}

export function decodeStats(b: Buffer | undefined): HolderStats {
  return b ? { holders: b.readUIntBE(2, 6), total: bytesToBig(b.subarray(8, 24)) } : { holders: 0, total: 0n };
}

/** The tables: key building and the reads the queries make. */
export class IndexTables {
  private readonly base = Buffer.from([P.stateIndex]);

  constructor(readonly db: KvStore) {}

  key(table: number, ...parts: Uint8Array[]): Buffer {
    let n = this.base.length + 1;
    for (const p of parts) n += p.length;
    const k = Buffer.allocUnsafe(n);
    this.base.copy(k, 0);
    k[this.base.length] = table;
    let at = this.base.length + 1;
    for (const p of parts) {
      k.set(p, at);
      at += p.length;
    }
    return k;
  }

  /** A row key from parts of a state key (latin1 strings, one byte per character). */
  keyOf(table: number, a: string, b = '', c = ''): Buffer {
    const k = Buffer.allocUnsafe(2 + a.length + b.length + c.length);
    k[0] = P.stateIndex;
    k[1] = table;
    k.write(a, 2, 'latin1');
    if (b) k.write(b, 2 + a.length, 'latin1');
    if (c) k.write(c, 2 + a.length + b.length, 'latin1');
    return k;
  }

  /** A rank key: table, prefix (latin1), the amount's bytes inverted (the largest sorts first), address (latin1). */
  rankKey(table: number, prefix: string, amount: Buffer, address: string): Buffer {
    const at = 2 + prefix.length;
    const k = Buffer.allocUnsafe(at + amount.length + address.length);
    k[0] = P.stateIndex;
    k[1] = table;
    if (prefix) k.write(prefix, 2, 'latin1');
    for (let i = 0; i < amount.length; i++) k[at + i] = ~amount[i] & 0xff;
    k.write(address, at + amount.length, 'latin1');
    return k;
  }

  /** Keys (and values) under a prefix, in order, skipping `offset` and returning at most `limit`. */
  rows(prefix: Buffer, offset = 0, limit = Number.MAX_SAFE_INTEGER): [Buffer, Buffer][] {
    const out: [Buffer, Buffer][] = [];
    const end = prefixEnd(prefix);
    let from = prefix;
    let skip = offset;
    while (out.length < limit) {
      const want = Math.min(READ_CHUNK, skip + limit - out.length);
      const rows = this.db.rangeSync({ gte: from, lt: end, limit: want });
      for (const row of rows) {
        if (skip > 0) skip--;
        else if (out.length < limit) out.push(row);
      }
      if (rows.length < want) break;
      from = Buffer.concat([rows[rows.length - 1][0], ZERO]);
    }
    return out;
  }

  get(key: Buffer): Buffer | undefined {
    return this.db.getManySync([key])[0];
  }
}

const READ_CHUNK = 1024;
const ZERO = Buffer.from([0]);

/** The whole `O` table. */
export const WHOLE_TABLE = { gte: Buffer.from([P.stateIndex]), lt: prefixEnd(Buffer.from([P.stateIndex])) };

/** Delete every row of the index (before a rebuild): one range tombstone. */
export const clearTables = (db: KvStore): Promise<void> => db.clearRange(WHOLE_TABLE);
