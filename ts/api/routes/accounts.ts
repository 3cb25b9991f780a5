import { accountProof, getBalanceBase, getNonce } from '../../services/index.js';
import { addressParam } from '../params.js';
import type { RouteDef } from '../types.js';

export const accountRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts/:address/balance',
    handler: (ctx, _req, p) => {
      const address = addressParam(p.address);
      return { body: { address, balance: getBalanceBase(ctx, address) } };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:address/nonce',
    handler: (ctx, _req, p) => {
      const address = addressParam(p.address);
      return { body: { address, nonce: getNonce(ctx, address) } };
    },
  },
];

accountRoutes.push({
  method: 'GET',
  path: '/address/:address/proof',
  handler: async (ctx, _req, p) => ({ body: await accountProof(ctx, addressParam(p.address)) }),
});
