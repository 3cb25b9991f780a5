/**
 * Polled filters with geth's semantics (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter,
 * eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter). Each filter is a bounded subscription to
 * the node's event feed (chain-events.ts), so filters see blocks in height order exactly once, from the
 * moment they are installed. A filter nobody polls for FILTER_TIMEOUT_MS is removed, as in geth; a client
 * holds at most `maxPerClient` filters, so one client cannot exhaust the node.
 */
import { randomBytes } from 'node:crypto';
import type { Block } from '../chain/index.js';
import type { ChainReader } from '../chain/interface.js';
import type { ReceiptRecord } from '../execution/index.js';
import { ServerError } from '../util/index.js';
import { type ChainEvent, type ChainEventFeed, type ChainEventKind, ChainSubscription } from './chain-events.js';
import { type FoundLog, type LogFilter, matchingLogs } from './log-match.js';

/** geth's filter deadline: a filter not polled for this long is uninstalled. */
export const FILTER_TIMEOUT_MS = 5 * 60_000;
/** Filters one client (an HTTP client address or a WebSocket connection) may hold at once. */
export const MAX_FILTERS_PER_CLIENT = 256;
/** Events (blocks or pending transactions) a filter buffers between polls; older ones are dropped beyond. */
export const MAX_FILTER_QUEUE = 10_000;
/** How often expired filters are looked for. */
const SWEEP_INTERVAL_MS = 30_000;

export type FilterKind = 'blocks' | 'pending' | 'logs';

/** A block bound of a log filter: a height, or `latest` (follows the head). */
export type FilterBound = number | 'latest';

/** What a log filter matches: addresses and topics as eth_getLogs, and a block range that may follow the head. */
export interface LogCriteria {
  addresses: Uint8Array[];
  topics: (Uint8Array[] | null)[];
  fromBlock: FilterBound;
  toBlock: FilterBound;
}

/** What eth_getFilterChanges returns before shaping: hashes (0x-prefixed) or logs. */
export type FilterChanges = { kind: 'hashes'; hashes: string[] } | { kind: 'logs'; logs: FoundLog[] };

export class FilterNotFoundError extends ServerError {
  constructor() {
    super('filter not found');
  }
}

export class TooManyFiltersError extends ServerError {
  constructor(max: number) {
    super(`too many filters: a client may hold at most ${max}; uninstall some (eth_uninstallFilter) or let them expire`);
  }
}

interface Installed {
  id: string;
  client: string;
  kind: FilterKind;
  sub: ChainSubscription;
  criteria: LogCriteria | null;
  /** Clock time after which the filter is removed unless polled. */
  deadline: number;
}

export interface FilterOptions {
  timeoutMs?: number;
  maxPerClient?: number;
  maxQueued?: number;
  /** Milliseconds clock (tests move it). */
  now?: () => number;
}

const KINDS: Record<FilterKind, ReadonlySet<ChainEventKind>> = {
  blocks: new Set(['block_finalized']),
  logs: new Set(['block_finalized']),
  pending: new Set(['pending_tx']),
};

/** Whether a block height lies inside a filter's range (a `latest` bound is open). */
export function inFilterRange(c: Pick<LogCriteria, 'fromBlock' | 'toBlock'>, height: number): boolean {
  return (c.fromBlock === 'latest' || height >= c.fromBlock) && (c.toBlock === 'latest' || height <= c.toBlock);
}

/** The logs of one committed block that match a filter. */
export function blockLogs(
  block: Block,
  receipts: readonly ReceiptRecord[],
  f: Pick<LogFilter, 'addresses' | 'topics'>,
): FoundLog[] {
  return matchingLogs({ height: block.index, hash: block.hash, txid: (i) => block.transactions[i].txid, receipts }, f);
}

/** Receipts of a finalized-block event: from its execution, or (a block replayed at start) from the store. */
export async function eventReceipts(
  ctx: { chain: ChainReader },
  e: Extract<ChainEvent, { kind: 'block_finalized' }>,
): Promise<readonly ReceiptRecord[]> {
  return e.result?.receipts ?? (await ctx.chain.blocks.receipts(e.block.index)) ?? [];
}

/** The node's installed filters (one registry per node). */
export class FilterRegistry {
  private readonly filters = new Map<string, Installed>();
  private readonly perClient = new Map<string, number>();
  private readonly timeoutMs: number;
  private readonly maxPerClient: number;
  private readonly maxQueued: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly chain: ChainReader,
    private readonly feed: ChainEventFeed,
    opts: FilterOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? FILTER_TIMEOUT_MS;
    this.maxPerClient = opts.maxPerClient ?? MAX_FILTERS_PER_CLIENT;
    this.maxQueued = opts.maxQueued ?? MAX_FILTER_QUEUE;
    this.now = opts.now ?? Date.now;
  }

  /** Installed filters (all clients). */
  get size(): number {
    return this.filters.size;
  }

  /** Start removing expired filters periodically (the timer does not keep the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), Math.min(SWEEP_INTERVAL_MS, this.timeoutMs));
    this.timer.unref();
  }

  /** Stop the sweeper and drop every filter. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const id of [...this.filters.keys()]) this.uninstall(id);
  }

  /** Install a filter for a client; returns its id (geth's form: 0x + 32 hex digits). */
  install(client: string, kind: FilterKind, criteria: LogCriteria | null = null): string {
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.maxPerClient) {
      // Expired filters of this client count only until the next sweep; sweep now before refusing.
      this.sweep();
      if ((this.perClient.get(client) ?? 0) >= this.maxPerClient) throw new TooManyFiltersError(this.maxPerClient);
    }
    const id = `0x${randomBytes(16).toString('hex')}`;
    const sub = new ChainSubscription(this.feed, this.maxQueued, KINDS[kind]);
    this.filters.set(id, { id, client, kind, sub, criteria, deadline: this.now() + this.timeoutMs });
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    return id;
  }

  /** True when the filter existed (geth answers false for an unknown id, not an error). */
  uninstall(id: string): boolean {
    const f = this.filters.get(normId(id));
    if (!f) return false;
    f.sub.close();
    this.filters.delete(f.id);
    const left = (this.perClient.get(f.client) ?? 1) - 1;
    if (left > 0) this.perClient.set(f.client, left);
    else this.perClient.delete(f.client);
    return true;
  }

  /** Drop every filter of a client (a WebSocket connection that closed). */
  removeClient(client: string): void {
    for (const f of [...this.filters.values()]) if (f.client === client) this.uninstall(f.id);
  }

  /** Remove the filters whose deadline passed; returns how many. */
  sweep(): number {
    const now = this.now();
    let n = 0;
    for (const f of [...this.filters.values()]) {
      if (f.deadline <= now) {
        this.uninstall(f.id);
        n++;
      }
    }
    return n;
  }

  /** The filter's kind and criteria (eth_getFilterLogs runs its criteria as a query). FilterNotFoundError. */
  get(id: string): { kind: FilterKind; criteria: LogCriteria | null } {
    const f = this.live(id);
    return { kind: f.kind, criteria: f.criteria };
  }

  /**
   * What happened since the last poll (geth's eth_getFilterChanges): block hashes, pending transaction
   * hashes or matching logs, in the order the node committed or admitted them. Polling resets the deadline.
   */
  async changes(id: string): Promise<FilterChanges> {
    const f = this.live(id);
    f.deadline = this.now() + this.timeoutMs;
    const events: ChainEvent[] = [];
    for (let item = f.sub.poll(); item; item = f.sub.poll()) {
      // A filter that fell MAX_FILTER_QUEUE events behind lost the oldest ones; it goes on from the newest.
      if ('event' in item) events.push(item.event);
    }
    if (f.kind === 'pending') {
      return { kind: 'hashes', hashes: events.map((e) => (e.kind === 'pending_tx' ? `0x${e.tx.txid}` : '')) };
    }
    if (f.kind === 'blocks') {
      return { kind: 'hashes', hashes: events.map((e) => (e.kind === 'block_finalized' ? `0x${e.block.hash}` : '')) };
    }
    const c = f.criteria as LogCriteria;
    const logs: FoundLog[] = [];
    for (const e of events) {
      if (e.kind !== 'block_finalized' || !inFilterRange(c, e.block.index)) continue;
      logs.push(...blockLogs(e.block, await eventReceipts({ chain: this.chain }, e), c));
    }
    return { kind: 'logs', logs };
  }

  private live(id: string): Installed {
    const f = this.filters.get(normId(id));
    if (!f || f.deadline <= this.now()) {
      if (f) this.uninstall(f.id);
      throw new FilterNotFoundError();
    }
    return f;
  }
}

/** Ids are compared case-insensitively (clients echo what they got, some upper-case hex). */
const normId = (id: string): string => id.toLowerCase();
