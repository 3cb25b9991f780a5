/**
 * How state values become rows of the state index's tables (state-index-store.ts). A fold sets each
 * given state key's rows to what its current value says, reading the rows it replaces from the tables
 * themselves (not from the block's undo record): folding the same values twice leaves the same rows and
 * totals, so a block folded again after a crash or during a rebuild does no harm.
 */
import { STAKING_NS, TOKEN_NS, parseTokenKey } from '../modules/index.js';
import { parseDelegationKey, parseUnbondingKey } from '../ledger/index.js';
import { NS, addressFromAccountKey, type KeyStr } from '../state/index.js';
import type { KvBatch } from '../storage/index.js';
import { decodeStats, encodeStats, type HolderStats, type IndexTables, type IndexTotals, T } from './state-index-store.js';

/** The state namespaces the index reads, as [first, end) ranges of the key's first byte. */
export const INDEXED_NAMESPACES: readonly [number, number][] = [
  [NS.account, NS.account + 1],
  [TOKEN_NS.token, TOKEN_NS.tokenBalance + 1],
  [STAKING_NS.delegation, STAKING_NS.unbonding + 1],
];

const INDEXED = new Set<number>([NS.account, TOKEN_NS.token, TOKEN_NS.tokenBalance, STAKING_NS.delegation, STAKING_NS.unbonding]);

/** Whether the index reads this state key (cheap: its namespace byte). */
export const isIndexedKey = (k: KeyStr): boolean => INDEXED.has(k.charCodeAt(0));

/** The address string of 20 raw bytes, as the state key parsers give it. */
export const addressOf = (raw20: Buffer): string =>
  addressFromAccountKey(String.fromCharCode(NS.account) + raw20.toString('latin1')) as string;
/** The `SRC20_…` contract string of 20 raw bytes. */
export const contractOf = (raw20: Buffer): string =>
  parseTokenKey(String.fromCharCode(TOKEN_NS.token) + raw20.toString('latin1')) as string;

interface Pending {
  read: number;
  apply: (old: Buffer | undefined) => void;
}

/**
 * Fold the current values of state keys (undefined: deleted) into the tables. `built`: the build of an
 * empty index, which reads nothing (there are no old rows) and keeps the token holder stats in that map,
 * written once at its end (writeStats); otherwise the rows replaced and the stats are read from the tables.
 * Amounts stay bytes where they can (a rank key is the amount's bytes inverted): a block folds ~12,000
 * accounts on the commit path.
 */
export function foldChanges(
  t: IndexTables,
  totals: IndexTotals,
  values: ReadonlyMap<KeyStr, Buffer | undefined>,
  batch: KvBatch,
  built?: Map<string, HolderStats>,
): void {
  const reads: Buffer[] = [];
  const pending: Pending[] = [];
  const stats = built ?? new Map<string, HolderStats>();
  const statsRead = new Map<string, number>();
  const later = (row: Buffer, apply: (old: Buffer | undefined) => void): void => {
    pending.push({ read: built ? -1 : reads.push(row) - 1, apply });
  };
  for (const [k, v] of values) {
    switch (k.charCodeAt(0)) {
      case NS.account:
        if (k.length === 21) {
          const addr = k.substring(1, 21);
          const row = t.keyOf(T.account, addr);
          later(row, (old) => foldAccount(t, totals, batch, addr, row, old, v));
        }
        break;
      case TOKEN_NS.token:
        if (k.length === 21) {
          const row = t.keyOf(T.token, k.substring(1, 21));
          later(row, (old) => {
            if (v && !old) {
              batch.put(row, PRESENT);
              totals.tokens++;
            } else if (!v && old) {
              batch.del(row);
              totals.tokens--;
            }
          });
        }
        break;
      case TOKEN_NS.tokenBalance:
        if (k.length === 41) {
          const c = k.substring(1, 21);
          if (!built && !statsRead.has(c)) statsRead.set(c, reads.push(t.keyOf(T.holderStats, c)) - 1);
          const row = t.keyOf(T.holding, c, k.substring(21, 41));
          later(row, (old) => foldHolding(t, batch, stats, k, row, old, v));
        }
        break;
      case STAKING_NS.delegation:
        if (parseDelegationKey(k)) {
          const row = t.keyOf(T.delegation, k.substring(21, 41), k.substring(1, 21));
          if (v) batch.put(row, EMPTY);
          else batch.del(row);
        }
        break;
      case STAKING_NS.unbonding:
        if (parseUnbondingKey(k)) {
          const row = t.keyOf(T.unbonding, k.substring(1, 21), k.substring(41, 49), k.substring(21, 41));
          if (v) batch.put(row, EMPTY);
          else batch.del(row);
        }
        break;
    }
  }
  const got = reads.length > 0 ? t.db.getManySync(reads) : [];
  if (!built) for (const [c, i] of statsRead) stats.set(c, decodeStats(got[i]));
  for (const p of pending) p.apply(p.read < 0 ? undefined : got[p.read]);
  if (!built) writeStats(t, batch, stats);
}

/** The holder stats rows of these tokens (a token without holders has none). */
export function writeStats(t: IndexTables, batch: KvBatch, stats: ReadonlyMap<string, HolderStats>): void {
  for (const [c, s] of stats) {
    const row = t.keyOf(T.holderStats, c);
    if (s.holders > 0) batch.put(row, encodeStats(s));
    else batch.del(row);
  }
}

const EMPTY = Buffer.alloc(0);
const PRESENT = Buffer.from([1]);

/** An account's row holds its balance as the record has it (32 bytes), zero balances too. */
function foldAccount(
  t: IndexTables,
  totals: IndexTotals,
  batch: KvBatch,
  addr: string,
  row: Buffer,
  old: Buffer | undefined,
  v: Buffer | undefined,
): void {
  const balance = v?.subarray(8, 40);
  // A nonce-only change (the sender of a zero-fee call): the rows stay as they are.
  if (old && balance && old.equals(balance)) return;
  if (old) {
    totals.accountRecords--;
    if (!isZero(old)) {
      batch.del(t.rankKey(T.accountRank, '', old, addr));
      totals.nonZero--;
      totals.total -= uint(old);
    }
  }
  if (!balance) {
    if (old) batch.del(row);
    return;
  }
  batch.put(row, balance);
  totals.accountRecords++;
  if (!isZero(balance)) {
    batch.put(t.rankKey(T.accountRank, '', balance, addr), EMPTY);
    totals.nonZero++;
    totals.total += uint(balance);
  }
}

/** A holding's row holds the amount as the state has it (16 bytes); zero amounts have none. */
function foldHolding(
  t: IndexTables,
  batch: KvBatch,
  stats: Map<string, HolderStats>,
  k: KeyStr,
  row: Buffer,
  old: Buffer | undefined,
  v: Buffer | undefined,
): void {
  const after = v && !isZero(v) ? v : undefined;
  if (old === undefined && after === undefined) return;
  if (old && after && old.equals(after)) return;
  const c = k.substring(1, 21);
  const h = k.substring(21, 41);
  let s = stats.get(c);
  if (!s) stats.set(c, (s = { holders: 0, total: 0n }));
  if (old) {
    batch.del(t.rankKey(T.holderRank, c, old, h));
    s.holders--;
    s.total -= uint(old);
  }
  if (after) {
    batch.put(row, after);
    batch.put(t.rankKey(T.holderRank, c, after, h), EMPTY);
    if (!old) batch.put(t.keyOf(T.accountTokens, h, c), EMPTY);
    s.holders++;
    s.total += uint(after);
  } else {
    batch.del(row);
    batch.del(t.keyOf(T.accountTokens, h, c));
  }
}

function isZero(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

/** A big-endian amount of 16 or 32 bytes. */
function uint(b: Buffer): bigint {
  let n = 0n;
  for (let i = 0; i < b.length; i += 8) n = (n << 64n) | b.readBigUInt64BE(i);
  return n;
}
