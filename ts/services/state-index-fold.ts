/**
 * How state values become rows of the state index's tables (state-index-store.ts). A fold sets each
 * given state key's rows to what its current value says, reading the rows it replaces from the tables
 * themselves (not from the block's undo record): folding the same values twice leaves the same rows and
 * totals, so a block folded again after a crash or during a rebuild does no harm.
 */
import { parseDelegationKey, parseUnbondingKey } from '../ledger/staking/index.js';
import { decodeU128, parseTokenKey } from '../ledger/tokens/state.js';
import { NS, addressFromAccountKey, decodeAccount } from '../state/accounts.js';
import type { KeyStr } from '../state/state-store.js';
import type { KvBatch } from '../storage/index.js';
import {
  amountBytes,
  amountOf,
  decodeStats,
  encodeStats,
  type HolderStats,
  type IndexTables,
  type IndexTotals,
  rankBytes,
  T,
} from './state-index-store.js';

/** The state namespaces the index reads, as [first, end) ranges of the key's first byte. */
export const INDEXED_NAMESPACES: readonly [number, number][] = [
  [NS.account, NS.account + 1],
  [NS.token, NS.tokenBalance + 1],
  [NS.stakingDelegation, NS.stakingUnbonding + 1],
];

const INDEXED = new Set<number>([NS.account, NS.token, NS.tokenBalance, NS.stakingDelegation, NS.stakingUnbonding]);

/** Whether the index reads this state key (cheap: its namespace byte). */
export const isIndexedKey = (k: KeyStr): boolean => INDEXED.has(k.charCodeAt(0));

const raw = (k: KeyStr, from: number, to: number): Buffer => Buffer.from(k.slice(from, to), 'latin1');

/** The address string of 20 raw bytes, as the state key parsers give it. */
export const addressOf = (raw20: Buffer): string =>
  addressFromAccountKey(String.fromCharCode(NS.account) + raw20.toString('latin1')) as string;
/** The `SRC20_…` contract string of 20 raw bytes. */
export const contractOf = (raw20: Buffer): string =>
  parseTokenKey(String.fromCharCode(NS.token) + raw20.toString('latin1')) as string;

interface Pending {
  read: number;
  apply: (old: Buffer | undefined) => void;
}

/**
 * Fold the current values of state keys (undefined: deleted) into the tables. `built`: the build of an
 * empty index, which reads nothing (there are no old rows) and keeps the token holder stats in that map,
 * written once at its end (writeStats); otherwise the rows replaced and the stats are read from the tables.
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
          const addr = raw(k, 1, 21);
          const row = t.key(T.account, addr);
          later(row, (old) => foldAccount(t, totals, batch, addr, row, old, v));
        }
        break;
      case NS.token:
        if (k.length === 21) {
          const row = t.key(T.token, raw(k, 1, 21));
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
      case NS.tokenBalance:
        if (k.length === 41) {
          const c = raw(k, 1, 21);
          const h = raw(k, 21, 41);
          const cs = c.toString('latin1');
          if (!built && !statsRead.has(cs)) statsRead.set(cs, reads.push(t.key(T.holderStats, c)) - 1);
          const row = t.key(T.holding, c, h);
          later(row, (old) => foldHolding(t, batch, stats, c, h, row, old, v));
        }
        break;
      case NS.stakingDelegation:
        if (parseDelegationKey(k)) {
          const row = t.key(T.delegation, raw(k, 21, 41), raw(k, 1, 21));
          if (v) batch.put(row, EMPTY);
          else batch.del(row);
        }
        break;
      case NS.stakingUnbonding:
        if (parseUnbondingKey(k)) {
          const row = t.key(T.unbonding, raw(k, 1, 21), raw(k, 41, 49), raw(k, 21, 41));
          if (v) batch.put(row, EMPTY);
          else batch.del(row);
        }
        break;
    }
  }
  const got = reads.length > 0 ? t.db.getManySync(reads) : [];
  if (!built) for (const [cs, i] of statsRead) stats.set(cs, decodeStats(got[i]));
  for (const p of pending) p.apply(p.read < 0 ? undefined : got[p.read]);
  if (!built) writeStats(t, batch, stats);
}

/** The holder stats rows of these tokens (a token without holders has none). */
export function writeStats(t: IndexTables, batch: KvBatch, stats: ReadonlyMap<string, HolderStats>): void {
  for (const [cs, s] of stats) {
    const row = t.key(T.holderStats, Buffer.from(cs, 'latin1'));
    if (s.holders > 0) batch.put(row, encodeStats(s));
    else batch.del(row);
  }
}

const EMPTY = Buffer.alloc(0);
const PRESENT = Buffer.from([1]);
const PRESENT_ZERO = Buffer.from([0]);

function foldAccount(
  t: IndexTables,
  totals: IndexTotals,
  batch: KvBatch,
  addr: Buffer,
  row: Buffer,
  old: Buffer | undefined,
  v: Buffer | undefined,
): void {
  const balance = v ? decodeAccount(v).balance : 0n;
  if (old) {
    const before = amountOf(old);
    // A nonce-only change (the sender of a zero-fee call): the rows stay as they are.
    if (v && before === balance) return;
    totals.accountRecords--;
    if (before > 0n) {
      batch.del(t.key(T.accountRank, rankBytes(before, 32), addr));
      totals.nonZero--;
      totals.total -= before;
    }
  }
  if (!v) {
    if (old) batch.del(row);
    return;
  }
  // Never an empty value: the row's presence is what tells an account record from none.
  batch.put(row, balance > 0n ? amountBytes(balance) : PRESENT_ZERO);
  totals.accountRecords++;
  if (balance > 0n) {
    batch.put(t.key(T.accountRank, rankBytes(balance, 32), addr), EMPTY);
    totals.nonZero++;
    totals.total += balance;
  }
}

function foldHolding(
  t: IndexTables,
  batch: KvBatch,
  stats: Map<string, HolderStats>,
  c: Buffer,
  h: Buffer,
  row: Buffer,
  old: Buffer | undefined,
  v: Buffer | undefined,
): void {
  const before = old ? amountOf(old) : 0n;
  const after = v ? decodeU128(v) : 0n;
  if (before === after) return;
  const cs = c.toString('latin1');
  let s = stats.get(cs);
  if (!s) stats.set(cs, (s = { holders: 0, total: 0n }));
  if (before > 0n) {
    batch.del(t.key(T.holderRank, c, rankBytes(before, 16), h));
    s.holders--;
    s.total -= before;
  }
  if (after > 0n) {
    batch.put(row, amountBytes(after));
    batch.put(t.key(T.holderRank, c, rankBytes(after, 16), h), EMPTY);
    batch.put(t.key(T.accountTokens, h, c), EMPTY);
    s.holders++;
    s.total += after;
  } else {
    batch.del(row);
    batch.del(t.key(T.accountTokens, h, c));
  }
}
