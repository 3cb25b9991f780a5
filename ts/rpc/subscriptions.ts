/**
 * eth_subscribe / eth_unsubscribe on one WebSocket connection, as geth serves them: `newHeads`, `logs`
 * (address/topics filter) and `newPendingTransactions` (hashes, or full transactions with `true`). Each
 * subscription reads the node's event feed through its own bounded ChainSubscription and delivers in the
 * feed's order; it starts delivering only once the answer carrying its id went out, so a client never
 * sees a notification for an id it does not know yet.
 */
import { randomBytes } from 'node:crypto';
import { type NodeContext, ethBlock, ethLog, ethTransaction, ethChainFacts } from '../services/index.js';
import { type ChainEvent, ChainSubscription, type FoundLog, type LogFilter, blockLogs, eventReceipts } from '../events/index.js';
import { stringifyExact } from '../util/index.js';
import { parseLogMatch } from './logs.js';
import { RPC, RpcError, type RpcTable, type SubscriptionHost, invalidParams } from './types.js';

/** Subscriptions one connection may hold. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 128;
/** Events a subscription may have waiting for its pump; beyond, the connection is too slow and is dropped. */
export const MAX_SUBSCRIPTION_QUEUE = 4096;

interface Live {
  id: string;
  sub: ChainSubscription;
  /** Set once the eth_subscribe answer is sent. */
  armed: boolean;
  wake?: () => void;
}

/** The transport side of a connection: send a frame (false once the connection is gone), or drop it. */
export interface NotificationSink {
  send(text: string): boolean;
  /** The consumer lagged (its subscription queue overflowed): drop the connection. */
  drop(reason: string): void;
}

/** geth's newHeads shape: the block header, without transactions, uncles, size or total difficulty. */
function headOf(ctx: NodeContext, e: Extract<ChainEvent, { kind: 'block_finalized' }>): Record<string, unknown> {
  const { chainId, evmHardfork } = ethChainFacts(ctx);
  const b = ethBlock(e.block, false, chainId, evmHardfork);
  const { transactions: _t, uncles: _u, size: _s, totalDifficulty: _d, ...header } = b;
  return header;
}

export class ConnectionSubscriptions implements SubscriptionHost {
  private readonly live = new Map<string, Live>();
  private closed = false;

  constructor(private readonly sink: NotificationSink) {}

  get size(): number {
    return this.live.size;
  }

  subscribe(ctx: NodeContext, params: unknown[]): string {
    if (!ctx.events) throw new RpcError(RPC.methodNotFound, 'subscriptions are not available on this node');
    if (this.live.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) {
      throw new RpcError(RPC.limitExceeded, `too many subscriptions: at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} per connection`);
    }
    const kind = params[0];
    if (kind !== 'newHeads' && kind !== 'logs' && kind !== 'newPendingTransactions') {
      throw new RpcError(RPC.methodNotFound, `no ${JSON.stringify(String(kind))} subscription in eth namespace`);
    }
    let render: (e: ChainEvent) => unknown[] | Promise<unknown[]>;
    if (kind === 'newHeads') {
      if (params.length > 1) throw invalidParams('too many arguments, want at most 1');
      render = (e) => (e.kind === 'block_finalized' ? [headOf(ctx, e)] : []);
    } else if (kind === 'logs') {
      const match: Pick<LogFilter, 'addresses' | 'topics'> = parseLogMatch(params[1] ?? {});
      render = async (e) => {
        if (e.kind !== 'block_finalized') return [];
        const logs: FoundLog[] = blockLogs(e.block, await eventReceipts(ctx, e), match);
        return logs.map((l) => ethLog(l.log, l.at));
      };
    } else {
      if (params[1] !== undefined && params[1] !== null && typeof params[1] !== 'boolean') {
        throw invalidParams('invalid argument 1: expected a boolean (full transactions)');
      }
      const full = params[1] === true;
      const { chainId, evmHardfork } = ethChainFacts(ctx);
      const pending = { blockHash: null, blockNumber: null, index: null };
      render = (e) => {
        if (e.kind !== 'pending_tx') return [];
        return [full ? ethTransaction(e.tx, pending, chainId, evmHardfork) : `0x${e.tx.txid}`];
      };
    }
    const id = `0x${randomBytes(16).toString('hex')}`;
    const kinds = new Set([kind === 'newPendingTransactions' ? 'pending_tx' : 'block_finalized'] as const);
    const live: Live = { id, sub: new ChainSubscription(ctx.events, MAX_SUBSCRIPTION_QUEUE, kinds), armed: false };
    this.live.set(id, live);
    void this.pump(live, render);
    return id;
  }

  unsubscribe(id: string): boolean {
    const live = this.live.get(typeof id === 'string' ? id.toLowerCase() : '');
    if (!live) return false;
    this.live.delete(live.id);
    live.sub.close();
    live.wake?.();
    return true;
  }

  /** Start delivering a subscription: the answer carrying its id has been sent (unknown ids are ignored). */
  arm(id: string): void {
    const live = this.live.get(id);
    if (!live || live.armed) return;
    live.armed = true;
    live.wake?.();
  }

  /** The connection ended: stop every subscription. */
  closeAll(): void {
    this.closed = true;
    for (const id of [...this.live.keys()]) this.unsubscribe(id);
  }

  private async pump(live: Live, render: (e: ChainEvent) => unknown[] | Promise<unknown[]>): Promise<void> {
    if (!live.armed) await new Promise<void>((r) => (live.wake = r));
    live.wake = undefined;
    const prefix = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${live.id}","result":`;
    for (;;) {
      const item = await live.sub.next();
      if (!item || this.closed || !this.live.has(live.id)) return;
      if ('lagged' in item) {
        // The subscription fell MAX_SUBSCRIPTION_QUEUE events behind: the client cannot keep up.
        this.sink.drop(`subscription ${live.id} lagged ${item.lagged} events behind`);
        return;
      }
      let results: unknown[];
      try {
        results = await render(item.event);
      } catch {
        continue;
      }
      for (const r of results) {
        if (!this.sink.send(`${prefix}${stringifyExact(r)}}}`)) return;
      }
    }
  }
}

/** eth_subscribe / eth_unsubscribe: served on connections that can push (WebSocket); HTTP callers get geth's error. */
export const subscriptionMethods: RpcTable = {
  eth_subscribe: {
    params: ['any', 'any?'],
    handler: (ctx, params, caller) => {
      if (!caller.subscriptions) throw new RpcError(RPC.methodNotFound, 'notifications not supported');
      return caller.subscriptions.subscribe(ctx, params);
    },
  },
  eth_unsubscribe: {
    params: ['any'],
    handler: (_ctx, [id], caller) => {
      if (!caller.subscriptions) throw new RpcError(RPC.methodNotFound, 'notifications not supported');
      return caller.subscriptions.unsubscribe(id as string);
    },
  },
};
