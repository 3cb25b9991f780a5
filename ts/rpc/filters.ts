/**
 * eth_ filter methods (geth's semantics; events/filters.ts keeps the filters). Filters belong to the
 * calling client: an HTTP client address, or a WebSocket connection (its filters go when it closes).
 */
import { type NodeContext, ethLog, findLogs, headHeight, heightOfHash } from '../services/index.js';
import type { FilterRegistry, LogCriteria } from '../events/index.js';
import { isHash } from '../util/index.js';
import { checkLogRange, parseLogMatch } from './logs.js';
import { type BlockTag, parseBlockTag } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

/** A log filter as eth_newFilter stores it; `blockHash` filters name one existing block. */
export type StoredLogCriteria = LogCriteria & { blockHash?: string };

function registryOf(ctx: NodeContext): FilterRegistry {
  if (!ctx.filters) throw new RpcError(RPC.methodNotFound, 'filters are not available on this node');
  return ctx.filters;
}

/** A filter's block bound: a height, or `latest` for the head tags (every finality tag is the head here). */
function bound(raw: unknown): LogCriteria['fromBlock'] {
  if (raw === undefined || raw === null) return 'latest';
  const tag: BlockTag = parseBlockTag(raw, 0);
  if (tag === 'earliest') return 0;
  return typeof tag === 'number' ? tag : 'latest';
}

/** eth_newFilter's object: addresses and topics as eth_getLogs; from/to default to `latest`. */
export function parseFilterCriteria(raw: unknown): StoredLogCriteria {
  const match = parseLogMatch(raw);
  const o = raw as Record<string, unknown>;
  if (o.blockHash !== undefined && o.blockHash !== null) {
    if (o.fromBlock !== undefined || o.toBlock !== undefined)
      throw invalidParams('invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    if (!isHash(o.blockHash) || !(o.blockHash as string).startsWith('0x'))
      throw invalidParams('invalid argument 0: blockHash must be 0x + 64 hex');
    // Changes never match new blocks (they have other hashes); eth_getFilterLogs reads the named block.
    return { ...match, fromBlock: -1, toBlock: -1, blockHash: (o.blockHash as string).toLowerCase() };
  }
  const c: StoredLogCriteria = { ...match, fromBlock: bound(o.fromBlock), toBlock: bound(o.toBlock) };
  if (typeof c.fromBlock === 'number' && typeof c.toBlock === 'number' && c.fromBlock > c.toBlock) {
    throw invalidParams('invalid from and to block combination');
  }
  return c;
}

/** eth_getFilterLogs: the filter's criteria as an eth_getLogs query now (`latest` is the head). */
async function filterLogs(ctx: NodeContext, c: StoredLogCriteria): Promise<unknown[]> {
  let from: number;
  let to: number;
  if (c.blockHash !== undefined) {
    const h = await heightOfHash(ctx, c.blockHash);
    if (h === null) throw new RpcError(RPC.server, 'unknown block');
    from = h;
    to = h;
  } else {
    const head = headHeight(ctx);
    from = c.fromBlock === 'latest' ? head : c.fromBlock;
    // A range reaching past the head ends at the head (the rest has no logs yet).
    to = c.toBlock === 'latest' ? head : Math.min(c.toBlock, head);
    if (from > head) return [];
    checkLogRange(from, to);
  }
  const logs = await findLogs(ctx, { fromBlock: from, toBlock: to, addresses: c.addresses, topics: c.topics });
  return logs.map((l) => ethLog(l.log, l.at));
}

function filterId(v: unknown): string {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(v))
    throw invalidParams('invalid argument 0: filter id must be a hex string');
  return v;
}

export const filterMethods: RpcTable = {
  eth_newFilter: {
    params: ['object'],
    handler: (ctx, [raw], caller) => registryOf(ctx).install(caller.client(), 'logs', parseFilterCriteria(raw)),
  },
  eth_newBlockFilter: { params: [], handler: (ctx, _p, caller) => registryOf(ctx).install(caller.client(), 'blocks') },
  eth_newPendingTransactionFilter: {
    // geth's optional fullTx flag is accepted; the answer is hashes (full bodies only over eth_subscribe).
    params: ['bool?'],
    handler: (ctx, _p, caller) => registryOf(ctx).install(caller.client(), 'pending'),
  },
  eth_getFilterChanges: {
    params: ['any'],
    handler: async (ctx, [id]) => {
      const changes = await registryOf(ctx).changes(filterId(id));
      return changes.kind === 'hashes' ? changes.hashes : changes.logs.map((l) => ethLog(l.log, l.at));
    },
  },
  eth_getFilterLogs: {
    params: ['any'],
    handler: (ctx, [id]) => {
      const f = registryOf(ctx).get(filterId(id));
      // geth: only log filters have logs to query.
      if (f.kind !== 'logs' || !f.criteria) throw new RpcError(RPC.server, 'filter not found');
      return filterLogs(ctx, f.criteria as StoredLogCriteria);
    },
  },
  eth_uninstallFilter: { params: ['any'], handler: (ctx, [id]) => registryOf(ctx).uninstall(filterId(id)) },
};
