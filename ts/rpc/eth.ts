import {
  type Block,
  GAS_PRICE_WEI,
  INITIAL_BASE_FEE_WEI,
  HistoryUnavailableError,
  type NodeContext,
  blockAtHeight,
  chainIdOf,
  ethChainFacts,
  headHeight,
  heightOfTag,
  lookupTransaction,
  oldestStateHeight,
  resolveBlock,
  resolveBlockHeight,
  ethBlock,
  ethTransaction,
  getBalance,
  getNonce,
  getPendingNonce,
  nonceAt,
} from '../services/index.js';
import { qty } from '../util/index.js';
import { blockRefOf, parseBlockTag, parseQuantity } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/**
 * The height whose state a state-reading method reads: undefined for no block, a tag naming the head, or
 * the head itself; else the height a number / hash / { blockNumber } / { blockHash } (EIP-1898) names.
 * An unknown or future block is "header not found"; a height older than the history the node keeps is
 * refused with the oldest available height (HistoryUnavailableError, -32000).
 */
export async function stateHeightOf(ctx: NodeContext, ref: unknown, i: number): Promise<number | undefined> {
  if (ref === undefined || ref === null) return undefined;
  if (typeof ref === 'string' && !HASH_RE.test(ref)) {
    const tag = parseBlockTag(ref, i);
    if (tag === 'latest' || tag === 'pending') return undefined;
  }
  const height = await resolveBlockHeight(ctx, blockRefOf(ref, i));
  if (height === null) throw new RpcError(RPC.server, 'header not found');
  if (height === headHeight(ctx)) return undefined;
  const oldest = oldestStateHeight(ctx);
  if (height < oldest) throw new HistoryUnavailableError(height, oldest, oldest === ctx.chain.blocks.earliest);
  return height;
}

/** For methods that serve the head state only (debug_traceCall): an older block is refused. */
export async function requireHeadBlockRef(ctx: NodeContext, ref: unknown, i: number): Promise<void> {
  const height = await stateHeightOf(ctx, ref, i);
  if (height !== undefined) {
    throw new RpcError(RPC.server, `historical state is not available to this method (the head is ${headHeight(ctx)})`);
  }
}

/** Most blocks one eth_feeHistory covers; geth caps larger counts to its limit instead of refusing them. */
export const MAX_FEE_HISTORY_BLOCKS = 1024;

/** eth_feeHistory's blockCount: a hex quantity or a decimal number/string (geth's HexOrDecimal64), capped. */
function feeHistoryCount(v: unknown): number {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? BigInt(v) : parseQuantity(v, 0);
  return Number(n > BigInt(MAX_FEE_HISTORY_BLOCKS) ? BigInt(MAX_FEE_HISTORY_BLOCKS) : n);
}

/** A block in the Ethereum shape (the chain's id, hardfork and gas limit); null when there is none. */
function blockJson(ctx: NodeContext, b: Block | null, full: unknown): unknown {
  if (!b) return null;
  const f = ethChainFacts(ctx);
  return ethBlock(b, full === true, f.chainId, f.evmHardfork, f.blockGasLimit);
}

/** The block a tag or number names; null when it does not exist (yet). */
function blockAt(ctx: NodeContext, raw: unknown): Promise<Block | null> {
  return resolveBlock(ctx, parseBlockTag(raw, 0));
}

/** The block with this hash; null when unknown (geth's answer, not an error). */
function blockWithHash(ctx: NodeContext, hash: string): Promise<Block | null> {
  return resolveBlock(ctx, { hash });
}

/** Transaction `index` of block `b` in the Ethereum shape; null when the block or the index does not exist. */
function txAtIndex(ctx: NodeContext, b: Block | null, rawIndex: unknown): unknown {
  const i = parseQuantity(rawIndex, 1);
  if (!b || i >= BigInt(b.transactions.length)) return null;
  const index = Number(i);
  const pos = { blockHash: b.hash, blockNumber: b.index, index };
  const f = ethChainFacts(ctx);
  return ethTransaction(b.transactions[index], pos, f.chainId, f.evmHardfork);
}

/** Block-indexed methods geth serves and clients call (counts, transactions by position, uncles: none under PoA). */
const blockIndexMethods: RpcTable = {
  eth_getBlockTransactionCountByNumber: {
    params: ['blockTag'],
    handler: async (ctx, [tag]) => {
      const b = await blockAt(ctx, tag);
      return b ? qty(b.transactions.length) : null;
    },
  },
  eth_getBlockTransactionCountByHash: {
    params: ['hash'],
    handler: async (ctx, [hash]) => {
      const b = await blockWithHash(ctx, hash as string);
      return b ? qty(b.transactions.length) : null;
    },
  },
  eth_getTransactionByBlockNumberAndIndex: {
    params: ['blockTag', 'quantity'],
    handler: async (ctx, [tag, i]) => txAtIndex(ctx, await blockAt(ctx, tag), i),
  },
  eth_getTransactionByBlockHashAndIndex: {
    params: ['hash', 'quantity'],
    handler: async (ctx, [hash, i]) => txAtIndex(ctx, await blockWithHash(ctx, hash as string), i),
  },
  eth_getUncleCountByBlockNumber: {
    params: ['blockTag'],
    handler: async (ctx, [tag]) => ((await blockAt(ctx, tag)) ? '0x0' : null),
  },
  eth_getUncleCountByBlockHash: {
    params: ['hash'],
    handler: async (ctx, [hash]) => ((await blockWithHash(ctx, hash as string)) ? '0x0' : null),
  },
  eth_getUncleByBlockNumberAndIndex: { params: ['blockTag', 'quantity'], handler: () => null },
  eth_getUncleByBlockHashAndIndex: { params: ['hash', 'quantity'], handler: () => null },
};

export const ethMethods: RpcTable = {
  ...blockIndexMethods,
  eth_chainId: { params: [], handler: (ctx) => qty(chainIdOf(ctx)) },
  eth_blockNumber: { params: [], handler: (ctx) => qty(headHeight(ctx)) },
  eth_gasPrice: { params: [], handler: () => qty(GAS_PRICE_WEI) },
  eth_maxPriorityFeePerGas: { params: [], handler: () => qty(INITIAL_BASE_FEE_WEI) },
  // The same source as /native_status.sync_info (catching_up, target_height): the proven target.
  eth_syncing: {
    params: [],
    handler: (ctx) => {
      const s = ctx.network?.syncing();
      return s ? { startingBlock: qty(s.starting), currentBlock: qty(s.current), highestBlock: qty(s.highest) } : false;
    },
  },
  eth_accounts: { params: [], handler: () => [] },
  eth_getBalance: {
    params: ['address', 'blockRef?'],
    handler: async (ctx, [address, ref]) => {
      // Parsed and resolved here first: a block it cannot name is geth's "header not found".
      const at = await stateHeightOf(ctx, ref, 1);
      const wei = getBalance(ctx, { address: address as string, at });
      return qty(typeof wei === 'bigint' ? wei : await wei);
    },
  },
  eth_getTransactionCount: {
    params: ['address', 'blockRef?'],
    handler: async (ctx, [address, ref]) => {
      if (ref === 'pending') return qty(getPendingNonce(ctx, address as string));
      const height = await stateHeightOf(ctx, ref, 1);
      return qty(height === undefined ? getNonce(ctx, address as string) : await nonceAt(ctx, address as string, height));
    },
  },
  eth_getBlockByNumber: {
    params: ['blockTag', 'bool?'],
    handler: async (ctx, [tag, full]) => blockJson(ctx, await blockAt(ctx, tag), full),
  },
  eth_getBlockByHash: {
    params: ['hash', 'bool?'],
    handler: async (ctx, [hash, full]) => blockJson(ctx, await blockWithHash(ctx, hash as string), full),
  },
  eth_getTransactionByHash: {
    params: ['hash'],
    handler: async (ctx, [hash]) => {
      const found = await lookupTransaction(ctx, hash as string);
      if (!found) return null;
      const f = ethChainFacts(ctx);
      const pos = found.block
        ? { blockHash: found.block.hash, blockNumber: found.block.index, index: found.index }
        : { blockHash: null, blockNumber: null, index: null };
      return ethTransaction(found.tx, pos, f.chainId, f.evmHardfork);
    },
  },
  eth_feeHistory: {
    params: ['any', 'blockTag', 'array?'],
    handler: async (ctx, [count, newest, percentiles]) => {
      const n = feeHistoryCount(count);
      const pct = (percentiles ?? []) as unknown[];
      if (
        pct.length > 100 ||
        !pct.every((p, i) => typeof p === 'number' && p >= 0 && p <= 100 && (i === 0 || p >= (pct[i - 1] as number)))
      ) {
        throw invalidParams('invalid argument 2: reward percentiles must be ascending numbers in [0, 100]');
      }
      const requested = heightOfTag(ctx, parseBlockTag(newest, 1));
      const head = headHeight(ctx);
      if (requested > head) {
        throw new RpcError(RPC.server, `request beyond head block: requested ${requested}, head ${head}`);
      }
      // geth answers a zero count with an empty history, not an error.
      if (n === 0) return { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] };
      const last = requested;
      const first = Math.max(0, last - n + 1);
      const gasUsedRatio: number[] = [];
      const limit = Number(ethChainFacts(ctx).blockGasLimit);
      for (let h = first; h <= last; h++) {
        const b = await blockAtHeight(ctx, h);
        gasUsedRatio.push(b ? Number(b.gas_used) / limit : 0);
      }
      const fee = qty(INITIAL_BASE_FEE_WEI);
      const out: Record<string, unknown> = {
        oldestBlock: qty(first),
        baseFeePerGas: Array.from({ length: gasUsedRatio.length + 1 }, () => fee),
        gasUsedRatio,
      };
      if (pct.length > 0) out.reward = gasUsedRatio.map(() => pct.map(() => fee));
      return out;
    },
  },
};
