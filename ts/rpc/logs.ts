import { type NodeContext, findLogs, headHeight, heightOfHash, heightOfTag } from '../services/index.js';
import type { FoundLog, LogFilter } from '../events/index.js';
import { fromHex, isAddress } from '../util/index.js';
import { parseBlockTag } from './params.js';
import { RPC, RpcError, invalidParams } from './types.js';

export { type FoundLog, type LogFilter, logMatches } from '../events/index.js';

/** Largest block range one eth_getLogs may cover (spec: Limits). */
export const MAX_LOG_RANGE = 10_000;

const TOPIC_RE = /^0x[0-9a-fA-F]{64}$/;

function topicBytes(v: unknown): Uint8Array {
  if (typeof v !== 'string' || !TOPIC_RE.test(v)) throw invalidParams('invalid argument 0: topics must be 0x + 64 hex');
  return fromHex(v);
}

/** The address and topic parts of a filter object (eth_getLogs, eth_newFilter, eth_subscribe logs). */
export function parseLogMatch(raw: unknown): Pick<LogFilter, 'addresses' | 'topics'> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidParams('invalid argument 0: expected a filter object');
  const o = raw as Record<string, unknown>;
  const addrRaw = o.address === undefined || o.address === null ? [] : Array.isArray(o.address) ? o.address : [o.address];
  const addresses = addrRaw.map((a) => {
    if (!isAddress(a)) throw invalidParams('invalid argument 0: address must be 0x + 40 hex characters');
    return fromHex(a);
  });
  const topicsRaw = o.topics === undefined || o.topics === null ? [] : o.topics;
  if (!Array.isArray(topicsRaw)) throw invalidParams('invalid argument 0: topics must be an array');
  if (topicsRaw.length > 4) throw invalidParams('invalid argument 0: at most 4 topic slots');
  const topics = topicsRaw.map((slot) => {
    if (slot === null) return null;
    if (Array.isArray(slot)) return slot.length === 0 ? null : slot.map(topicBytes);
    return [topicBytes(slot)];
  });
  return { addresses, topics };
}

/** Parse and check an eth_getLogs filter against the head (errors as geth reports them). */
export async function parseLogFilter(ctx: NodeContext, raw: unknown): Promise<LogFilter> {
  const { addresses, topics } = parseLogMatch(raw);
  const o = raw as Record<string, unknown>;
  if (o.blockHash !== undefined && o.blockHash !== null) {
    if (o.fromBlock !== undefined || o.toBlock !== undefined)
      throw invalidParams('invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    if (typeof o.blockHash !== 'string' || !TOPIC_RE.test(o.blockHash))
      throw invalidParams('invalid argument 0: blockHash must be 0x + 64 hex');
    const h = await heightOfHash(ctx, o.blockHash);
    // geth answers an unknown hash with a plain server error, not an invalid-params one.
    if (h === null) throw new RpcError(RPC.server, 'unknown block');
    return { fromBlock: h, toBlock: h, addresses, topics, blockHash: o.blockHash };
  }
  const head = headHeight(ctx);
  const fromBlock = o.fromBlock === undefined || o.fromBlock === null ? head : heightOfTag(ctx, parseBlockTag(o.fromBlock, 0));
  const toBlock = o.toBlock === undefined || o.toBlock === null ? head : heightOfTag(ctx, parseBlockTag(o.toBlock, 0));
  checkLogRange(fromBlock, toBlock);
  if (toBlock > head) throw invalidParams('block range extends beyond current head block');
  return { fromBlock, toBlock, addresses, topics };
}

/** The spec's range rules of a log query: from <= to, at most MAX_LOG_RANGE blocks (-32005). */
export function checkLogRange(fromBlock: number, toBlock: number): void {
  if (fromBlock > toBlock) throw invalidParams('invalid block range params');
  // The cap is checked on the numbers asked for, before the head: a too-wide range is -32005 on any chain,
  // also a young one whose head is below the requested end.
  if (toBlock - fromBlock + 1 > MAX_LOG_RANGE) {
    throw new RpcError(
      RPC.limitExceeded,
      `query returned more than ${MAX_LOG_RANGE} results: block range exceeds ${MAX_LOG_RANGE} blocks`,
    );
  }
}

/** Logs matching the filter, ordered by block, transaction index, log index (services/log-queries.ts). */
export async function getLogs(ctx: NodeContext, raw: unknown): Promise<FoundLog[]> {
  return findLogs(ctx, await parseLogFilter(ctx, raw));
}
