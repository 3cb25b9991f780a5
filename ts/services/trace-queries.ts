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
import type { StateReader } from '../state/state-store.js';
import { NodeError, NotFoundError } from '../util/errors.js';
import type { ChainContext } from './context.js';
import { traceHistoryOf } from './trace-history.js';

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

/** Run `use` on the site of block `block` (its environment, the state before it), the first `prefix` txs first. */
function atBlock<T>(ctx: ChainContext, block: Block, prefix: number, use: (site: TraceSite) => Promise<T>): Promise<T> {
  const chain = ctx.chain;
  return traceHistoryOf(chain).withStateAfter(block.index - 1, (parentState: StateReader) =>
    use({
      env: chain.blockEnv(block.index, block.validator, block.timestamp),
      parentState,
      store: chain.state,
      prefix: block.transactions.slice(0, prefix),
      // Between slices of a trace: a block being committed meanwhile is applied to the trie before its
      // undo record reaches the history, so wait until the trie is the head's again.
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

/** debug_traceCall: a call traced as eth_call runs it, in the environment of the block after the head. */
export async function traceCall(ctx: ChainContext, args: CallArgs, opts: TraceOptions): Promise<unknown> {
  const chain = ctx.chain;
  await chain.settled();
  const head = chain.head;
  const env = chain.blockEnv(head.index + 1, head.validator, Math.max(head.timestamp, Math.floor(Date.now() / 1000)));
  return traceHistoryOf(chain).withStateAfter(head.index, (parentState) =>
    traceCallAt({ env, parentState, store: chain.state, prefix: [], pause: () => chain.settled() }, args, opts),
  );
}
