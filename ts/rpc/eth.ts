import {
  type Block,
  GAS_PRICE_WEI,
  INITIAL_BASE_FEE_WEI,
  HistoryUnavailableError,
  type NodeContext,
  balanceWeiAt,
  blockGasLimitOf,
  ethBlock,
  ethTransaction,
  getBalanceWei,
  getNonce,
  getPendingNonce,
  nonceAt,
} from '../services/index.js';
import { normHash, qty } from '../util/index.js';
import { type BlockTag, parseBlockTag, parseQuantity } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/** Height a tag names: every finality tag is the head (PoA finality is immediate). */
/**
 * The height a block tag names. `safe` and `finalized` are the finalized height (under BFT every
 * committed block is final, so they equal `latest`; the engine's view is asked, not assumed).
 */
export function resolveHeight(ctx: NodeContext, tag: BlockTag | undefined): number {
  if (tag === 'earliest') return 0;
  if (tag === 'safe' || tag === 'finalized') return ctx.consensus.finalizedHeight();
  if (tag === undefined || typeof tag === 'string') return ctx.chain.height;
  return tag;
}

/**
 * The height whose state a state-reading method reads: undefined for no block, a tag naming the head, or
 * the head itself; else the height a number / hash / { blockNumber } / { blockHash } (EIP-1898) names.
 * An unknown or future block is "header not found"; a height older than the history the node keeps is
 * refused with the oldest available height (HistoryUnavailableError, -32000).
 */
export async function stateHeightOf(ctx: NodeContext, ref: unknown, i: number): Promise<number | undefined> {
  if (ref === undefined || ref === null) return undefined;
  let height: number | null;
  if (typeof ref === 'string' && HASH_RE.test(ref)) height = await ctx.chain.blocks.heightOfHash(ref);
  else if (typeof ref === 'object') {
    const o = ref as { blockHash?: unknown; blockNumber?: unknown };
    if (o.blockHash !== undefined) {
      if (typeof o.blockHash !== 'string' || !HASH_RE.test(o.blockHash))
        throw invalidParams(`invalid argument ${i}: blockHash must be 0x + 64 hex`);
      height = await ctx.chain.blocks.heightOfHash(o.blockHash);
    } else if (o.blockNumber !== undefined) height = resolveHeight(ctx, parseBlockTag(o.blockNumber, i));
    else throw invalidParams(`invalid argument ${i}: expected blockHash or blockNumber`);
  } else {
    const tag = parseBlockTag(ref, i);
    if (tag === 'latest' || tag === 'pending') return undefined;
    height = resolveHeight(ctx, tag);
  }
  if (height === null || height > ctx.chain.height) throw new RpcError(RPC.server, 'header not found');
  if (height === ctx.chain.height) return undefined;
  const oldest = ctx.chain.blocks.history.oldest;
  if (height < oldest) throw new HistoryUnavailableError(height, oldest);
  return height;
}

/** For methods that serve the head state only (debug_traceCall): an older block is refused. */
export async function requireHeadBlockRef(ctx: NodeContext, ref: unknown, i: number): Promise<void> {
  const height = await stateHeightOf(ctx, ref, i);
  if (height !== undefined) {
    throw new RpcError(RPC.server, `historical state is not available to this method (the head is ${ctx.chain.height})`);
  }
}

/** Most blocks one eth_feeHistory covers; geth caps larger counts to its limit instead of refusing them. */
export const MAX_FEE_HISTORY_BLOCKS = 1024;

/** eth_feeHistory's blockCount: a hex quantity or a decimal number/string (geth's HexOrDecimal64), capped. */
function feeHistoryCount(v: unknown): number {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? BigInt(v) : parseQuantity(v, 0);
  return Number(n > BigInt(MAX_FEE_HISTORY_BLOCKS) ? BigInt(MAX_FEE_HISTORY_BLOCKS) : n);
}

async function blockByTag(ctx: NodeContext, raw: unknown, full: unknown): Promise<unknown> {
  const b = await blockAt(ctx, raw);
  return b
    ? ethBlock(b, full === true, ctx.chain.params.chainId, ctx.chain.params.evmHardfork, blockGasLimitOf(ctx.chain.params))
    : null;
}

/** The block a tag or number names; null when it does not exist (yet). */
async function blockAt(ctx: NodeContext, raw: unknown): Promise<Block | null> {
  const h = resolveHeight(ctx, parseBlockTag(raw, 0));
  return h > ctx.chain.height ? null : ((await ctx.chain.blocks.getBlock(h)) ?? null);
}

/** The block with this hash; null when unknown (geth's answer, not an error). */
async function blockWithHash(ctx: NodeContext, hash: string): Promise<Block | null> {
  const h = await ctx.chain.blocks.heightOfHash(hash);
  return h === null ? null : ((await ctx.chain.blocks.getBlock(h)) ?? null);
}

/** Transaction `index` of block `b` in the Ethereum shape; null when the block or the index does not exist. */
function txAtIndex(ctx: NodeContext, b: Block | null, rawIndex: unknown): unknown {
  const i = parseQuantity(rawIndex, 1);
  if (!b || i >= BigInt(b.transactions.length)) return null;
  const index = Number(i);
  const pos = { blockHash: b.hash, blockNumber: b.index, index };
  return ethTransaction(b.transactions[index], pos, ctx.chain.params.chainId, ctx.chain.params.evmHardfork);
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
  eth_chainId: { params: [], handler: (ctx) => qty(ctx.chain.params.chainId) },
  eth_blockNumber: { params: [], handler: (ctx) => qty(ctx.chain.height) },
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
      const height = await stateHeightOf(ctx, ref, 1);
      return qty(
        height === undefined ? getBalanceWei(ctx, address as string) : await balanceWeiAt(ctx, address as string, height),
      );
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
  eth_getBlockByNumber: { params: ['blockTag', 'bool?'], handler: (ctx, [tag, full]) => blockByTag(ctx, tag, full) },
  eth_getBlockByHash: {
    params: ['hash', 'bool?'],
    handler: async (ctx, [hash, full]) => {
      const b = await blockWithHash(ctx, hash as string);
      return b
        ? ethBlock(b, full === true, ctx.chain.params.chainId, ctx.chain.params.evmHardfork, blockGasLimitOf(ctx.chain.params))
        : null;
    },
  },
  eth_getTransactionByHash: {
    params: ['hash'],
    handler: async (ctx, [hash]) => {
      const id = normHash(hash as string);
      const chainId = ctx.chain.params.chainId;
      const loc = await ctx.chain.blocks.txLocation(id);
      if (loc) {
        const b = await ctx.chain.blocks.getBlock(loc.height);
        const tx = b?.transactions[loc.index];
        if (b && tx)
          return ethTransaction(
            tx,
            { blockHash: b.hash, blockNumber: b.index, index: loc.index },
            chainId,
            ctx.chain.params.evmHardfork,
          );
      }
      const pending = ctx.mempool.get(id);
      return pending
        ? ethTransaction(pending, { blockHash: null, blockNumber: null, index: null }, chainId, ctx.chain.params.evmHardfork)
        : null;
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
      const requested = resolveHeight(ctx, parseBlockTag(newest, 1));
      if (requested > ctx.chain.height) {
        throw new RpcError(RPC.server, `request beyond head block: requested ${requested}, head ${ctx.chain.height}`);
      }
      // geth answers a zero count with an empty history, not an error.
      if (n === 0) return { oldestBlock: '0x0', baseFeePerGas: [], gasUsedRatio: [] };
      const last = requested;
      const first = Math.max(0, last - n + 1);
      const gasUsedRatio: number[] = [];
      for (let h = first; h <= last; h++) {
        const b = await ctx.chain.blocks.getBlock(h);
        gasUsedRatio.push(b ? Number(b.gas_used) / Number(blockGasLimitOf(ctx.chain.params)) : 0);
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
