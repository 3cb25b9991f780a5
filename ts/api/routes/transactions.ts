import { getTransaction, mempoolView, submitTransaction } from '../../services/index.js';
import { InvalidParamsError } from '../../util/errors.js';
import { jsonBody } from '../params.js';
import type { RouteDef } from '../types.js';

export const transactionRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/transactions',
    auth: true,
    write: true,
    handler: async (ctx, req) => {
      const body = jsonBody(req.body);
      if (!('transaction' in body)) throw new InvalidParamsError('missing field transaction');
      const r = await submitTransaction(ctx, body.transaction);
      return { body: { success: true, ...r } };
    },
  },
  {
    method: 'GET',
    path: '/transactions/:txid',
    handler: async (ctx, _req, p) => {
      const tx = await getTransaction(ctx, p.txid);
      return tx ? { body: tx } : { status: 404 };
    },
  },
  { method: 'GET', path: '/mempool', handler: (ctx) => ({ body: mempoolView(ctx) }) },
];
