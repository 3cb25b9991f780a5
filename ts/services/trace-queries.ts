import type { Block } from '../chain/index.js';
import {
  type BlockEnv,
  type BlockTraceEntry,
  DEFAULT_TRACE_OPTIONS,
  type CallArgs,
  InProcessTraceRunner,
  type TraceJob,
  type TraceOptions,
  type TraceRunner,
  isEvmTransaction,
  withBlockOverrides,
} from '../execution/index.js';
import type { SignedTransaction } from '../ledger/index.js';
import type { StateChanges } from '../state/index.js';
import { NodeError, NotFoundError, ServerError } from '../util/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { type QueryOverrides, callEnv } from './evm-queries.js';
import { stateAt } from './state-at.js';
import { committedTransaction } from './tx-queries.js';

/** debug_traceTransaction on a native operation, or on an EVM transaction before EVM activation (spec). */
export class NotEvmTransactionError extends NodeError {
  constructor() {
    super('tx is not an EVM transaction', 'INVALID_ARGUMENT');
  }
}

/** native_traceTransaction on an EVM transaction (spec). */
export class EvmTransactionError extends NodeError {
  constructor() {
    super('tx is an EVM transaction, use debug_traceTransaction', 'INVALID_ARGUMENT');
  }
}

interface Located {
  block: Block;
  index: number;
  tx: SignedTransaction;
}

/** The block and position of a committed transaction; pending or unknown ones are "transaction not found". */
async function locate(ctx: ChainContext, txid: string): Promise<Located> {
  const found = await committedTransaction(ctx, txid);
  if (!found) throw new NotFoundError('transaction not found');
  return found;
}

const isEvmAt = (ctx: ChainContext, height: number) => (tx: SignedTransaction) =>
  isEvmTransaction(tx) && height >= ctx.chain.params.activation.evm;

/** Where no node runs (benches, service tests), traces run in-process. */
const inProcess = new InProcessTraceRunner();

const runnerOf = (ctx: ChainContext): TraceRunner => (ctx as Partial<NodeContext>).evmTraces ?? inProcess;

/**
 * Run `job` on the state after block `height` (a read-only view from the state history, ts/chain/
 * state-history.ts, unchanged while later blocks commit, released when the trace settles), in block `env`,
 * after re-applying `prefix`: in the node's trace pool, or in-process. Older than the history the node
 * keeps (`--history N`): HistoryUnavailableError naming the oldest block.
 */
async function runTrace(
  ctx: ChainContext,
  height: number,
  env: BlockEnv,
  prefix: readonly SignedTransaction[],
  job: TraceJob,
  opts: TraceOptions,
  devWrites?: StateChanges,
): Promise<unknown> {
  const view = await stateAt(ctx, height);
  try {
    return await runnerOf(ctx).run({ job, env, state: view, prefix, devWrites, opts });
  } catch (err) {
    // Never a bare "internal error": what failed is said (a re-execution that diverged, a worker lost).
    if (!(err instanceof NodeError)) throw new ServerError(`trace failed: ${(err as Error)?.message ?? String(err)}`);
    throw err;
  } finally {
    view.release();
  }
}

/**
 * Run `job` in block `block` on the state before it, its first `prefix` transactions re-applied first. On
 * the dev chain the block's record of dev state writes (anvil_set..., hardhat_set...) comes first (docs/dev-chain.md).
 */
async function atBlock(ctx: ChainContext, block: Block, prefix: number, job: TraceJob, opts: TraceOptions): Promise<unknown> {
  const env = ctx.chain.blockEnv(block.index, block.validator, block.timestamp);
  const devWrites = (await ctx.chain.devPatchAt(block.index)) ?? undefined;
  return runTrace(ctx, block.index - 1, env, block.transactions.slice(0, prefix), job, opts, devWrites);
}

/** debug_traceTransaction: the selected tracer's result for a committed EVM transaction. */
export async function traceTransaction(ctx: ChainContext, txid: string, opts: TraceOptions): Promise<unknown> {
  const { block, index, tx } = await locate(ctx, txid);
  if (!isEvmAt(ctx, block.index)(tx)) throw new NotEvmTransactionError();
  return atBlock(ctx, block, index, { kind: 'transaction', tx }, opts);
}

/** debug_traceBlockByNumber / ByHash: one `{ txHash, result }` per transaction, in block order. */
export async function traceBlock(ctx: ChainContext, block: Block, opts: TraceOptions): Promise<BlockTraceEntry[]> {
  if (block.index === 0) return [];
  const txs = block.transactions;
  const job: TraceJob = { kind: 'block', txs, evm: txs.map(isEvmAt(ctx, block.index)) };
  return (await atBlock(ctx, block, 0, job, opts)) as BlockTraceEntry[];
}

/** Options of a native trace: its size is bounded (~5 KB), its time by the default trace timeout. */
const NATIVE_TRACE_OPTIONS = DEFAULT_TRACE_OPTIONS;

/** native_traceTransaction: the operation-level trace of a committed native operation. */
export async function traceNativeTransaction(ctx: ChainContext, txid: string): Promise<unknown> {
  const { block, index, tx } = await locate(ctx, txid);
  if (isEvmTransaction(tx)) throw new EvmTransactionError();
  const stored = (await ctx.chain.blocks.receipts(block.index))?.[index];
  const receipt = stored && { status: stored.status, output: stored.output, events: stored.events };
  return atBlock(ctx, block, index, { kind: 'native', tx, receipt }, NATIVE_TRACE_OPTIONS);
}

/**
 * debug_traceCall: a call traced as eth_call runs it, on the state after block `height` (the head when
 * absent) in the environment eth_call gives it (the next block's).
 */
export async function traceCall(
  ctx: ChainContext,
  args: CallArgs,
  opts: TraceOptions,
  height?: number,
  overrides: QueryOverrides = {},
): Promise<unknown> {
  const chain = ctx.chain;
  await chain.settled();
  const at = height ?? chain.height;
  const env = withBlockOverrides(await callEnv(ctx, height), overrides.block);
  return runTrace(ctx, at, env, [], { kind: 'call', args, overrides: { state: overrides.state } }, opts);
}
