import type { Block } from '../chain/index.js';
import { type SignedTransaction, parseSignedTransaction } from '../ledger/index.js';
import { isHash, normHash } from '../util/index.js';
import type { ChainContext, NodeContext } from './context.js';

export interface TxView extends SignedTransaction {
  status: 'confirmed' | 'pending_in_mempool';
  block_index: number | null;
  block_hash: string | null;
  /** Unix seconds of the including block; null while pending. */
  block_timestamp: number | null;
  tx_index: number | null;
  confirmations: number;
}

/** View of the transaction at position index of a committed block (REST detail, history and lists). */
export function confirmedTxView(ctx: NodeContext, block: Block, index: number): TxView {
  return {
    ...block.transactions[index],
    status: 'confirmed',
    block_index: block.index,
    block_hash: block.hash,
    block_timestamp: block.timestamp,
    tx_index: index,
    confirmations: ctx.chain.height - block.index + 1,
  };
}

/** Where a transaction is: in a committed block (with its position), or pending in the pool (block null). */
export type LocatedTransaction =
  | { tx: SignedTransaction; block: Block; index: number }
  | { tx: SignedTransaction; block: null; index: null };

/** A committed transaction with its block and position (the store only); null when not committed. */
export async function committedTransaction(
  ctx: ChainContext,
  txid: string,
): Promise<{ tx: SignedTransaction; block: Block; index: number } | null> {
  const loc = await ctx.chain.blocks.txLocation(normHash(txid));
  if (!loc) return null;
  const block = await ctx.chain.blocks.getBlock(loc.height);
  const tx = block?.transactions[loc.index];
  return block && tx ? { tx, block, index: loc.index } : null;
}

/** The one transaction lookup of every transport: the store first, then the pool; null when neither has it. */
export async function lookupTransaction(
  ctx: Pick<NodeContext, 'chain' | 'mempool'>,
  txid: string,
): Promise<LocatedTransaction | null> {
  const committed = await committedTransaction(ctx, txid);
  if (committed) return committed;
  const pending = ctx.mempool.get(normHash(txid));
  return pending ? { tx: pending, block: null, index: null } : null;
}

/** Whether a transaction id (normalized) is committed or pending, without reading its block. */
export async function isKnownTransaction(ctx: Pick<NodeContext, 'chain' | 'mempool'>, txid: string): Promise<boolean> {
  return (await ctx.chain.blocks.txLocation(txid)) !== null || ctx.mempool.get(txid) !== undefined;
}

/** A transaction by txid (with or without 0x): from the chain, else the mempool, else null. */
export async function getTransaction(ctx: NodeContext, txid: string): Promise<TxView | null> {
  if (!isHash(txid)) return null;
  const found = await lookupTransaction(ctx, txid);
  if (!found) return null;
  if (found.block) return confirmedTxView(ctx, found.block, found.index);
  return {
    ...found.tx,
    status: 'pending_in_mempool',
    block_index: null,
    block_hash: null,
    block_timestamp: null,
    tx_index: null,
    confirmations: 0,
  };
}

/** Validate and admit a native transaction; throws InvalidTransactionError with the spec's message. */
export async function submitTransaction(ctx: NodeContext, raw: unknown): Promise<{ txid: string; status: 'pending_in_mempool' }> {
  const tx = parseSignedTransaction(raw);
  await ctx.admission.submit(tx);
  return { txid: tx.txid, status: 'pending_in_mempool' };
}

/** Admit a signed Ethereum transaction (eth_sendRawTransaction's admission); resolves to its txid (64 hex). */
export async function submitRawTransaction(ctx: NodeContext, raw: Uint8Array): Promise<{ txid: string }> {
  const tx = await ctx.admission.submitRaw(raw);
  return { txid: tx.txid };
}

export function mempoolView(ctx: NodeContext, limit = 1000): { size: number; transactions: SignedTransaction[] } {
  return { size: ctx.mempool.size, transactions: ctx.mempool.list(limit) };
}

/** Admission's refusal (with its `reason`), for interfaces that word refusals their own way (JSON-RPC). */
export { RejectedTransactionError } from '../mempool/index.js';
