import { accountProof, getBalanceBase, getNonce } from '../../services/index.js';
import { addressParam } from '../params.js';
import { address, amount, arr, hash, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';

const addr = { address: S.addressParam };

export const accountRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts/:address/balance',
    tag: 'accounts',
    summary: 'Balance in base units',
    params: addr,
    response: obj({ address: address(), balance: amount() }),
    handler: (ctx, _req, p) => {
      const address = addressParam(p.address);
      return { body: { address, balance: getBalanceBase(ctx, address) } };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:address/nonce',
    tag: 'accounts',
    summary: 'Committed nonce',
    params: addr,
    response: obj({ address: address(), nonce: int() }),
    handler: (ctx, _req, p) => {
      const address = addressParam(p.address);
      return { body: { address, nonce: getNonce(ctx, address) } };
    },
  },
  {
    method: 'GET',
    path: '/address/:address/proof',
    tag: 'accounts',
    summary: 'Merkle membership proof of the account against the current state root',
    params: addr,
    response: obj({
      address: address(),
      height: int(),
      state_root: hash(),
      account: nullable(obj({ balance: amount(), balance_wei: int(), nonce: int() })),
      proof: nullable(
        obj({
          key: str('hex of the state key'),
          value: str('hex of the account record'),
          steps: arr({ type: 'object' }, 'branch steps from the leaf up'),
        }),
      ),
    }),
    handler: async (ctx, _req, p) => ({ body: await accountProof(ctx, addressParam(p.address)) }),
  },
];
