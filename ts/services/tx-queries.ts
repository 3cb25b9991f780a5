import type { SignedTransaction } from '../ledger/transaction.js';
import { parseSignedTransaction } from '../ledger/transaction.js';
import { isHash, normHash } from '../util/hex.js';
import type { NodeContext } from './context.js';

export interface TxView extends SignedTransaction {
  status: 'confirmed' | 'pending_in_mempool';
  block_index: number | null;
  block_hash: string | null;
  tx_index: number | null;
  confirmations: number;
}

/** A transaction by txid (with or without 0x): from the chain, else the mempool, else null. */
export async function getTransaction(ctx: NodeContext, txid: string): Promise<TxView | null> {
  if (!isHash(txid)) return null;
  const id = normHash(txid);
  const loc = await ctx.chain.blocks.txLocation(id);
  if (loc) {
    const block = await ctx.chain.blocks.getBlock(loc.height);
    const tx = block?.transactions[loc.index];
    if (block && tx) {
      return {
        ...tx,
        status: 'confirmed',
        block_index: block.index,
        block_hash: block.hash,
        tx_index: loc.index,
        confirmations: ctx.chain.height - block.index + 1,
      };
    }
  }
  const pending = ctx.mempool.get(id);
  if (pending)
    return { ...pending, status: 'pending_in_mempool', block_index: null, block_hash: null, tx_index: null, confirmations: 0 };
  return null;
}

/** Validate and admit a native transaction; throws InvalidTransactionError with the spec's message. */
export async function submitTransaction(ctx: NodeContext, raw: unknown): Promise<{ txid: string; status: 'pending_in_mempool' }> {
  const tx = parseSignedTransaction(raw);
  await ctx.admission.submit(tx);
  return { txid: tx.txid, status: 'pending_in_mempool' };
}

export function mempoolView(ctx: NodeContext, limit = 1000): { size: number; transactions: SignedTransaction[] } {
  return { size: ctx.mempool.size, transactions: ctx.mempool.list(limit) };
}
