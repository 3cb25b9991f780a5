import { crypto } from '../crypto/index.js';
import type { LogRecord } from '../execution/index.js';
import { type NodeContext, blockReceipts } from '../services/index.js';
import { fromHex, isAddress } from '../util/hex.js';
import { resolveHeight } from './eth.js';
import { parseBlockTag } from './params.js';
import { RPC, RpcError, invalidParams } from './types.js';

/** Largest block range one eth_getLogs may cover (spec: Limits). */
export const MAX_LOG_RANGE = 10_000;

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

const TOPIC_RE = /^0x[0-9a-fA-F]{64}$/;

function topicBytes(v: unknown): Uint8Array {
  if (typeof v !== 'string' || !TOPIC_RE.test(v)) throw invalidParams('invalid argument 0: topics must be 0x + 64 hex');
  return fromHex(v);
}

/** Parse and check an eth_getLogs filter against the head (errors as geth reports them). */
export async function parseLogFilter(ctx: NodeContext, raw: unknown): Promise<LogFilter> {
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
  if (o.blockHash !== undefined && o.blockHash !== null) {
    if (o.fromBlock !== undefined || o.toBlock !== undefined)
      throw invalidParams('invalid argument 0: blockHash excludes fromBlock/toBlock');
    if (typeof o.blockHash !== 'string' || !TOPIC_RE.test(o.blockHash))
      throw invalidParams('invalid argument 0: blockHash must be 0x + 64 hex');
    const h = await ctx.chain.blocks.heightOfHash(o.blockHash);
    if (h === null) throw new RpcError(RPC.invalidParams, 'unknown block');
    return { fromBlock: h, toBlock: h, addresses, topics, blockHash: o.blockHash };
  }
  const head = ctx.chain.height;
  const fromBlock = o.fromBlock === undefined || o.fromBlock === null ? head : resolveHeight(ctx, parseBlockTag(o.fromBlock, 0));
  const toBlock = o.toBlock === undefined || o.toBlock === null ? head : resolveHeight(ctx, parseBlockTag(o.toBlock, 0));
  if (fromBlock > toBlock) throw invalidParams('invalid block range params');
  if (toBlock > head) throw invalidParams('block range extends beyond current head block');
  if (toBlock - fromBlock + 1 > MAX_LOG_RANGE) {
    throw new RpcError(
      RPC.limitExceeded,
      `query returned more than ${MAX_LOG_RANGE} results: block range exceeds ${MAX_LOG_RANGE} blocks`,
    );
  }
  return { fromBlock, toBlock, addresses, topics };
}

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

export function logMatches(log: LogRecord, f: LogFilter): boolean {
  if (f.addresses.length > 0 && !f.addresses.some((a) => eq(a, log.address))) return false;
  for (let i = 0; i < f.topics.length; i++) {
    const slot = f.topics[i];
    if (slot === null) continue;
    const t = log.topics[i];
    if (!t || !slot.some((x) => eq(x, t))) return false;
  }
  return true;
}

/**
 * Logs matching the filter, ordered by block, transaction index, log index. Blocks whose bloom
 * cannot hold the requested address/topics are skipped (one native bloomScan over the range).
 */
export async function getLogs(ctx: NodeContext, raw: unknown): Promise<FoundLog[]> {
  const f = await parseLogFilter(ctx, raw);
  const groups: Uint8Array[][] = [];
  if (f.addresses.length) groups.push(f.addresses);
  for (const slot of f.topics) if (slot) groups.push(slot);
  const heights: number[] = [];
  const blooms: Uint8Array[] = [];
  for (let h = f.fromBlock; h <= f.toBlock; h++) {
    const b = await ctx.chain.blocks.getBlock(h);
    if (!b || b.logs_bloom === '00'.repeat(256)) continue;
    heights.push(h);
    blooms.push(fromHex(b.logs_bloom));
  }
  const candidates = groups.length
    ? crypto()
        .bloomScan(blooms, groups)
        .map((i) => heights[i])
    : heights;
  const out: FoundLog[] = [];
  for (const h of candidates) {
    const [b, rs] = await Promise.all([ctx.chain.blocks.getBlock(h), blockReceipts(ctx, h)]);
    if (!b || !rs) continue;
    for (const r of rs) {
      r.receipt.logs.forEach((log, i) => {
        if (!logMatches(log, f)) return;
        out.push({
          log,
          at: {
            blockHash: b.hash,
            blockNumber: h,
            txHash: b.transactions[r.index].txid,
            txIndex: r.index,
            logIndex: r.firstLogIndex + i,
          },
        });
      });
    }
  }
  return out;
}
