import { type ChainValidation, validateChain, validatorSetAt } from '../chain/index.js';
import { blockReward, getSupply, maxSupplyBase, baseToNative, weiToBase } from '../ledger/index.js';
import { NotFoundError } from '../util/index.js';
import { chainIndex } from '../indexes/index.js';
import { NATIVE_TOKEN, type NodeContext } from './context.js';
import { deployedTokenCount } from './token-queries.js';

/** Product name reported by GET / (the node's own name is in GET /health). */
export const PRODUCT_NAME = 'native-node';
/** Blocks sampled (newest first, from the in-memory window) for the average block time. */
export const PERFORMANCE_SAMPLE_BLOCKS = 1000;

/** GET /: what this node is and where each resource lives (canonical paths). */
export function rootInfo(ctx: NodeContext): Record<string, unknown> {
  return {
    name: PRODUCT_NAME,
    version: ctx.version,
    chain_id: ctx.chain.params.chainId,
    consensus: ctx.chain.head.consensus,
    native_token: NATIVE_TOKEN,
    docs: {
      rpc_jsonrpc: '/rpc',
      rest: {
        chain_info: '/chain/info',
        blocks: '/chain/blocks',
        transactions: '/transactions',
        accounts: '/accounts/{address}/balance',
        tokens: '/tokens',
        validators: '/validators',
        staking: '/staking/validators',
        epoch: '/epoch/current',
        mempool: '/mempool',
      },
      ops: { health: '/health', metrics: '/metrics', explorer_builtin: '/explorer' },
    },
    jsonrpc_namespaces: {
      eth_: 'Ethereum-compatible methods (chain id, blocks, balances, transactions, receipts, logs, calls)',
      net_: 'network identity (net_version, net_listening)',
      web3_: 'client version (web3_clientVersion)',
      native_: 'native chain methods (transactions, balances, validator set, delegations, rewards, finality)',
    },
  };
}

export interface SupplyBase {
  minted: bigint;
  burned: bigint;
  circulating: bigint;
}

/** Supply totals of the state as it is now (call after chain.settled() for the head's), base units. */
export function supplyOfState(ctx: NodeContext): SupplyBase {
  const s = getSupply(ctx.chain.state);
  const minted = weiToBase(s.minted);
  const burned = weiToBase(s.burned);
  return { minted, burned, circulating: minted - burned };
}

/** Supply totals of the head state, base units. */
export async function supplyBase(ctx: NodeContext): Promise<SupplyBase> {
  await ctx.chain.settled();
  return supplyOfState(ctx);
}

/** GET /chain/info: exactly the spec's fields; `_native` amounts as JSON numbers. */
export async function chainInfo(ctx: NodeContext): Promise<Record<string, unknown>> {
  const supply = await supplyBase(ctx);
  const { chain } = ctx;
  const height = chain.height;
  const forkHeight = chain.params.activation.tokenomicsV2;
  const next = height + 1;
  return {
    chain_id: chain.params.chainId,
    height,
    total_blocks: height + 1,
    active_validators: validatorSetAt(chain.params, chain.state, next).length,
    circulating_supply_native: baseToNative(supply.circulating),
    max_supply_native: baseToNative(maxSupplyBase(height, forkHeight)),
    next_block_reward_native: baseToNative(blockReward(next, supply.minted, maxSupplyBase(next, forkHeight))),
    total_minted_native: baseToNative(supply.minted),
    total_burned_native: baseToNative(supply.burned),
    mempool_size: ctx.mempool.size,
    deployed_tokens: await deployedTokenCount(ctx),
    window_is_partial: chain.blocks.windowStart > 0,
    window_start_block: chain.blocks.windowStart,
  };
}

/** GET /chain/state-root/{height}. */
export async function stateRootAt(
  ctx: NodeContext,
  height: number,
): Promise<{ height: number; state_root: string; block_hash: string }> {
  const b = await ctx.chain.blocks.getBlock(height);
  if (!b) throw new NotFoundError('block not found');
  return { height: b.index, state_root: b.state_root, block_hash: b.hash };
}

export interface ChainPerformance {
  /** Blocks in the average block time sample (newest first from the in-memory window). */
  blocks: number;
  /** Mean time between the sampled blocks; 0 while fewer than two blocks exist (never null: clients chart it). */
  avg_block_time_ms: number;
  tps_1h: number;
  tps_24h: number;
  last_block_time: number;
  /** Mean BFT round of the sampled blocks (0 when every block was decided in its first round). */
  avg_round: number;
  /** Sampled blocks decided after round 0 (a proposer was down or a round timed out). */
  blocks_after_round_0: number;
  /** Head minus finalized height (0: every committed block is final). */
  finality_lag_blocks: number;
}

/** GET /chain/performance. */
export async function chainPerformance(ctx: NodeContext): Promise<ChainPerformance> {
  let newest = ctx.chain.head;
  let oldest = newest;
  let blocks = 0;
  let rounds = 0;
  let late = 0;
  for (const b of ctx.chain.blocks.recentBlocks()) {
    if (blocks === 0) newest = b;
    oldest = b;
    rounds += b.round;
    if (b.round > 0) late++;
    if (++blocks >= PERFORMANCE_SAMPLE_BLOCKS) break;
  }
  const idx = await chainIndex(ctx);
  const tps = (seconds: number): number => Math.round((idx.recentActivity(seconds).txs / seconds) * 1e6) / 1e6;
  return {
    blocks,
    avg_block_time_ms: blocks > 1 ? Math.round(((newest.timestamp - oldest.timestamp) * 1000) / (blocks - 1)) : 0,
    tps_1h: tps(3600),
    tps_24h: tps(86_400),
    last_block_time: newest.timestamp,
    avg_round: blocks ? Math.round((rounds / blocks) * 1000) / 1000 : 0,
    blocks_after_round_0: late,
    finality_lag_blocks: ctx.chain.height - ctx.consensus.finalizedHeight(),
  };
}

const validations = new WeakMap<NodeContext['chain'], Promise<ChainValidation>>();

/** GET /chain/validate: full re-verification from genesis; concurrent callers share the run in flight. */
export function validateChainShared(ctx: NodeContext): Promise<ChainValidation> {
  let run = validations.get(ctx.chain);
  if (!run) {
    run = validateChain(ctx.chain).finally(() => validations.delete(ctx.chain));
    validations.set(ctx.chain, run);
  }
  return run;
}
