/** The txpool_ namespace as geth serves it (status, content, contentFrom, inspect). */
import { toChecksumAddress } from '@ethereumjs/util';
import type { SignedTransaction } from '../ledger/index.js';
import { type NodeContext, ethChainFacts, ethTransaction, txPoolContents, txPoolStatus } from '../services/index.js';
import { qty } from '../util/index.js';
import type { RpcTable } from './types.js';

const PENDING = { blockHash: null, blockNumber: null, index: null };

type Shape = (ctx: NodeContext, tx: SignedTransaction) => unknown;

/** { sender (checksummed): { nonce (decimal): shape(tx) } }, geth's layout. */
function bySender(
  ctx: NodeContext,
  groups: Map<string, SignedTransaction[]>,
  shape: Shape,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [sender, txs] of groups) {
    const entries: Record<string, unknown> = {};
    for (const tx of txs) entries[tx.nonce.toString()] = shape(ctx, tx);
    out[toChecksumAddress(sender)] = entries;
  }
  return out;
}

const full: Shape = (ctx, tx) => {
  const { chainId, evmHardfork } = ethChainFacts(ctx);
  return ethTransaction(tx, PENDING, chainId, evmHardfork);
};

/** geth's one-line summary: `<to>: <value> wei + <gas> gas × <price> wei` (price: the fee cap). */
const summary: Shape = (ctx, tx) => {
  const t = full(ctx, tx) as { to: string | null; value: string; gas: string; gasPrice: string };
  const head = t.to === null ? 'contract creation' : toChecksumAddress(t.to);
  return `${head}: ${BigInt(t.value)} wei + ${BigInt(t.gas)} gas × ${BigInt(t.gasPrice)} wei`;
};

function contents(ctx: NodeContext, shape: Shape, from?: string): Record<string, unknown> {
  const c = txPoolContents(ctx, from);
  return { pending: bySender(ctx, c.pending, shape), queued: bySender(ctx, c.queued, shape) };
}

export const txpoolMethods: RpcTable = {
  txpool_status: {
    params: [],
    handler: (ctx) => {
      const s = txPoolStatus(ctx);
      return { pending: qty(s.pending), queued: qty(s.queued) };
    },
  },
  txpool_content: { params: [], handler: (ctx) => contents(ctx, full) },
  txpool_contentFrom: {
    params: ['address'],
    handler: (ctx, [a]) => {
      const c = contents(ctx, full, (a as string).toLowerCase()) as Record<string, Record<string, unknown>>;
      // geth's contentFrom answers the one sender's maps directly: { pending: { nonce: tx }, queued: {...} }.
      const only = (m: Record<string, unknown>) => (Object.values(m)[0] as Record<string, unknown> | undefined) ?? {};
      return { pending: only(c.pending), queued: only(c.queued) };
    },
  },
  txpool_inspect: { params: [], handler: (ctx) => contents(ctx, summary) },
};
