import type { Block } from '../chain/block.js';
import {
  type BlockTraceEntry,
  type TraceOptions,
  type TraceSite,
  isEvmTransaction,
  traceBlockTransactions,
  traceCall as traceCallAt,
  type CallArgs,
  traceTransaction as traceAt,
  traceNativeTransfer,
  traceNftOperation,
  traceTokenOperation,
} from '../execution/index.js';
import { txKind } from '../ledger/tx-kind.js';
import type { SignedTransaction } from '../ledger/transaction.js';
import { NodeError, NotFoundError } from '../util/errors.js';
import type { ChainContext } from './context.js';
import { callEnv } from './evm-queries.js';
import { type HistoricalStateView, stateAt } from './state-at.js';

/** debug_traceTransaction on a native operation, or on an EVM transaction before EVM activation (spec). */
export class NotEvmTransactionError extends NodeError {
  constructor() {
    super('tx is not an EVM transaction', 400, -32000);
  }
}

/** native_traceTransaction on an EVM transaction (spec). */
export class EvmTransactionError extends NodeError {
  constructor() {
    super('tx is an EVM transaction, use debug_traceTransaction', 400, -32000);
  }
}

interface Located {
  block: Block;
  index: number;
  tx: SignedTransaction;
}

/** The block and position of a committed transaction; pending or unknown ones are "transaction not found". */
async function locate(ctx: ChainContext, txid: string): Promise<Located> {
  const loc = await ctx.chain.blocks.txLocation(txid);
  const block = loc ? await ctx.chain.blocks.getBlock(loc.height) : null;
  const tx = loc && block ? block.transactions[loc.index] : undefined;
  if (!loc || !block || !tx) throw new NotFoundError('transaction not found');
  return { block, index: loc.index, tx };
}

const isEvmAt = (ctx: ChainContext, height: number) => (tx: SignedTransaction) =>
  isEvmTransaction(tx) && height >= ctx.chain.params.activation.evm;

/**
 * Run `use` over the state after block `height`: a read-only view from the state history (ts/chain/
 * state-history.ts) that stays the same while later blocks commit, released when `use` settles. Older
 * than the history the node keeps (`--history N`): HistoryUnavailableError naming the oldest block.
 */
async function withStateAfter<T>(ctx: ChainContext, height: number, use: (view: HistoricalStateView) => Promise<T>): Promise<T> {
  const view = await stateAt(ctx, height);
  try {
    return await use(view);
  } finally {
    view.release();
  }
}

/** Run `use` on the site of block `block` (its environment, the state before it), the first `prefix` txs first. */
function atBlock<T>(ctx: ChainContext, block: Block, prefix: number, use: (site: TraceSite) => Promise<T>): Promise<T> {
  const chain = ctx.chain;
  return withStateAfter(ctx, block.index - 1, (view) =>
    use({
      env: chain.blockEnv(block.index, block.validator, block.timestamp),
      parentState: view,
      store: view,
      prefix: block.transactions.slice(0, prefix),
      // Between slices of a trace, let a block being sealed meanwhile finish its commit.
      pause: () => chain.settled(),
    }),
  );
}

/** debug_traceTransaction: the selected tracer's result for a committed EVM transaction. */
export async function traceTransaction(ctx: ChainContext, txid: string, opts: TraceOptions): Promise<unknown> {
  const { block, index, tx } = await locate(ctx, txid);
  if (!isEvmAt(ctx, block.index)(tx)) throw new NotEvmTransactionError();
  const out = await atBlock(ctx, block, index, (site) => traceAt(site, tx, opts));
  return out.result;
}

/** debug_traceBlockByNumber / ByHash: one `{ txHash, result }` per transaction, in block order. */
export async function traceBlock(ctx: ChainContext, block: Block, opts: TraceOptions): Promise<BlockTraceEntry[]> {
  if (block.index === 0) return [];
  return atBlock(ctx, block, 0, (site) => traceBlockTransactions(site, block.transactions, isEvmAt(ctx, block.index), opts));
}

/** native_traceTransaction: the operation-level trace of a committed native operation. */
export async function traceNativeTransaction(ctx: ChainContext, txid: string): Promise<unknown> {
  const { block, index, tx } = await locate(ctx, txid);
  if (isEvmTransaction(tx)) throw new EvmTransactionError();
  const kind = txKind(tx);
  if (kind.kind === 'token') {
    const receipt = (await ctx.chain.blocks.receipts(block.index))?.[index];
    return atBlock(ctx, block, index, (site) => traceTokenOperation(site, tx, kind.op, receipt));
  }
  if (kind.kind === 'nft') return atBlock(ctx, block, index, (site) => traceNftOperation(site, tx));
  return atBlock(ctx, block, index, (site) => traceNativeTransfer(site, tx));
}

/**
 * debug_traceCall: a call traced as eth_call runs it, on the state after block `height` (the head when
 * absent) in the environment eth_call gives it (the next block's).
 */
export async function traceCall(ctx: ChainContext, args: CallArgs, opts: TraceOptions, height?: number): Promise<unknown> {
  const chain = ctx.chain;
  await chain.settled();
  const at = height ?? chain.height;
  const env = await callEnv(ctx, height);
  return withStateAfter(ctx, at, (view) =>
    traceCallAt({ env, parentState: view, store: view, prefix: [], pause: () => chain.settled() }, args, opts),
  );
}
