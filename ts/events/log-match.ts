/**
 * Log matching, shared by eth_getLogs (services/log-queries.ts) and the installed filters and log subscriptions
 * (filters.ts): the parsed filter, a found log's position, and the spec's matching rule.
 */
import type { LogSource } from '../chain/index.js';
import type { LogRecord, ReceiptRecord } from '../execution/index.js';

/** An eth_getLogs filter after parsing (rpc/logs.ts checks the raw one against the spec's rules). */
export interface LogFilter {
  fromBlock: number;
  toBlock: number;
  /** OR-list of 20-byte addresses; empty = any. */
  addresses: Uint8Array[];
  /** Up to 4 slots; null = any, else an OR-list of 32-byte topics. */
  topics: (Uint8Array[] | null)[];
  blockHash?: string;
}

export interface FoundLog {
  log: LogRecord;
  at: { blockHash: string; blockNumber: number; txHash: string; txIndex: number; logIndex: number };
}

export interface LocatedReceipt {
  receipt: ReceiptRecord;
  height: number;
  index: number;
  /** Index of the receipt's first log within the block. */
  firstLogIndex: number;
}

/** A block's receipts with each one's position and block-level first log index. */
export function locateReceipts(height: number, rs: readonly ReceiptRecord[]): LocatedReceipt[] {
  let logIndex = 0;
  return rs.map((receipt, index) => {
    const r = { receipt, height, index, firstLogIndex: logIndex };
    logIndex += receipt.logs.length;
    return r;
  });
}

const eq = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

/** The spec's rule: address in the OR-list (if any); per topic slot, null = any topic present, else one of its topics. */
export function logMatches(log: LogRecord, f: Pick<LogFilter, 'addresses' | 'topics'>): boolean {
  if (f.addresses.length > 0 && !f.addresses.some((a) => eq(a, log.address))) return false;
  // As geth and Hardhat: a log with fewer topics than the filter has positions never matches, even when the
  // extra positions are null wildcards (`topics: [null]` excludes LOG0 logs).
  if (log.topics.length < f.topics.length) return false;
  for (let i = 0; i < f.topics.length; i++) {
    const slot = f.topics[i];
    if (slot === null) continue;
    const t = log.topics[i];
    if (!t || !slot.some((x) => eq(x, t))) return false;
  }
  return true;
}

/** A block's logs that match the filter, in block order with their block-level positions. */
export function matchingLogs(src: LogSource, f: Pick<LogFilter, 'addresses' | 'topics'>): FoundLog[] {
  const out: FoundLog[] = [];
  for (const r of locateReceipts(src.height, src.receipts)) {
    r.receipt.logs.forEach((log, i) => {
      if (!logMatches(log, f)) return;
      out.push({
        log,
        at: {
          blockHash: src.hash,
          blockNumber: src.height,
          txHash: src.txid(r.index),
          txIndex: r.index,
          logIndex: r.firstLogIndex + i,
        },
      });
    });
  }
  return out;
}
