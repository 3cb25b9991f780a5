import type { Block, TxLocation } from '../chain/index.js';
import type { NodeContext } from './context.js';
import { type TxView, confirmedTxView } from './tx-queries.js';

/** Largest page of any transaction list. */
export const MAX_TX_PAGE = 100;
export const DEFAULT_TX_PAGE = 20;
/** Deepest offset a list accepts (history reads offset + limit index rows). */
export const MAX_LIST_OFFSET = 100_000;
/** Blocks GET /transactions scans back from the head (about 2.8 hours of 1 s blocks). */
export const RECENT_TX_SCAN_BLOCKS = 10_000;
const SCAN_CHUNK = 250;

export interface HistoryEntry extends TxView {
  /** Relative to the queried address: sent, received, or to itself. */
  direction: 'out' | 'in' | 'self';
}

export interface HistoryPage {
  address: string;
  transactions: HistoryEntry[];
  /** Transactions touching the address (all time). */
  total: number;
  limit: number;
  offset: number;
  page: number;
}

/** Views of the transactions at locs, reading each block once (one multi-get for those outside the window). */
async function viewsAt(ctx: NodeContext, locs: TxLocation[]): Promise<TxView[]> {
  const heights = [...new Set(locs.map((l) => l.height))];
  const found = ctx.chain.blocks.getBlocks(heights);
  const blocks = new Map<number, Block | null>(heights.map((h, i) => [h, found[i]]));
  const out: TxView[] = [];
  for (const loc of locs) {
    const b = blocks.get(loc.height);
    if (b?.transactions[loc.index]) out.push(confirmedTxView(ctx, b, loc.index));
  }
  return out;
}

/** Confirmed transactions sent or received by address, newest first. */
export async function addressHistory(ctx: NodeContext, address: string, offset: number, limit: number): Promise<HistoryPage> {
  const a = address.toLowerCase();
  const locs = await ctx.chain.blocks.addressHistory(a, offset, limit);
  const transactions = (await viewsAt(ctx, locs)).map(
    (v): HistoryEntry => ({ ...v, direction: v.from_address === v.to_address ? 'self' : v.from_address === a ? 'out' : 'in' }),
  );
  return { address: a, transactions, total: ctx.chain.blocks.txCount(a), limit, offset, page: Math.floor(offset / limit) };
}

export interface RecentTransactions {
  transactions: TxView[];
  limit: number;
  offset: number;
  page: number;
  /** Offset of the next page, or null when the scanned range holds no more. */
  next_offset: number | null;
  /** Lowest block height scanned (the list covers scanned_from_height .. head). */
  scanned_from_height: number;
}

/**
 * Confirmed transactions, newest first (descending height, then descending position in the block), from
 * the latest RECENT_TX_SCAN_BLOCKS blocks. Older transactions: blocks, address history or /transactions/{txid}.
 */
export async function recentTransactions(ctx: NodeContext, offset: number, limit: number): Promise<RecentTransactions> {
  const head = ctx.chain.height;
  const floor = Math.max(0, head - RECENT_TX_SCAN_BLOCKS + 1);
  const want = offset + limit + 1; // one extra tells whether a next page exists
  const found: TxView[] = [];
  let hi = head;
  while (hi >= floor && found.length < want) {
    const lo = Math.max(floor, hi - SCAN_CHUNK + 1);
    const blocks = await ctx.chain.blocks.readRange(lo, hi);
    for (let i = blocks.length - 1; i >= 0 && found.length < want; i--) {
      const b = blocks[i];
      for (let j = b.transactions.length - 1; j >= 0 && found.length < want; j--) found.push(confirmedTxView(ctx, b, j));
    }
    hi = lo - 1;
  }
  return {
    transactions: found.slice(offset, offset + limit),
    limit,
    offset,
    page: Math.floor(offset / limit),
    next_offset: found.length > offset + limit ? offset + limit : null,
    scanned_from_height: hi + 1,
  };
}
