import { getTransaction, mempoolView, submitTransaction } from '../../services/index.js';
import { arr, int, obj } from '../schema.js';
import * as S from '../schemas.js';
import { cacheAt } from '../cache.js';
import type { RouteDef } from '../types.js';
import { transactionEnvelope, txidParam } from './common.js';

export const transactionRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/transactions',
    auth: true,
    write: true,
    tag: 'transactions',
    summary: 'Submit a signed native transfer',
    body: S.submitBody,
    response: S.accepted,
    handler: async (ctx, req) => {
      const r = await submitTransaction(ctx, transactionEnvelope(req.body));
      return { body: { success: true, ...r } };
    },
  },
  {
    method: 'GET',
    path: '/transactions/:txid',
    tag: 'transactions',
    summary: 'Transaction by txid (confirmed or pending)',
    params: { txid: S.txidParam },
    statuses: { 404: 'unknown txid' },
    response: S.txView,
    handler: async (ctx, _req, p) => {
      const tx = await getTransaction(ctx, txidParam(p.txid));
      if (!tx) return { status: 404 };
      // In a final block a transaction never moves (a cached copy keeps the confirmations it was fetched with).
      return { body: tx, cache: tx.block_index === null ? undefined : cacheAt(ctx, tx.block_index) };
    },
  },
  {
    method: 'GET',
    path: '/mempool',
    tag: 'transactions',
    summary: 'Pending transactions in arrival order',
    response: obj({ size: int(), transactions: arr(S.signedTransaction) }),
    handler: (ctx) => ({ body: mempoolView(ctx) }),
  },
];
