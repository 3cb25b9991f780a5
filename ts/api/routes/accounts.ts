import { weiToBase } from '../../ledger/index.js';
import { accountProof, getBalance, getNonce, nonceAt } from '../../services/index.js';
import { addressParam } from '../params.js';
import { address, amount, arr, hash, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import { cacheAt } from '../cache.js';
import type { RouteDef } from '../types.js';
import { atHeight, atHeightParam, contractParam } from './common.js';

const addr = { address: S.addressParam };
export const accountRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts/:address/balance',
    tag: 'accounts',
    summary: 'Balance in base units (after block at_height when given)',
    params: addr,
    query: atHeight,
    response: obj({ address: address(), balance: amount() }),
    handler: (ctx, req, p) => {
      const address = addressParam(p.address);
      const height = atHeightParam(req.query);
      // REST answers base units: the wei balance converted here, at the edge (at the head without a promise).
      const wei = getBalance(ctx, { address, at: height });
      if (typeof wei === 'bigint') return { body: { address, balance: weiToBase(wei) } };
      return wei.then((w) => ({ body: { address, balance: weiToBase(w) }, cache: cacheAt(ctx, height as number) }));
    },
  },
  {
    method: 'GET',
    path: '/accounts/:address/nonce',
    tag: 'accounts',
    summary: 'Committed nonce (after block at_height when given)',
    params: addr,
    query: atHeight,
    response: obj({ address: address(), nonce: int() }),
    handler: (ctx, req, p) => {
      const address = addressParam(p.address);
      const height = atHeightParam(req.query);
      if (height === undefined) return { body: { address, nonce: getNonce(ctx, address) } };
      return nonceAt(ctx, address, height).then((nonce) => ({ body: { address, nonce }, cache: cacheAt(ctx, height) }));
    },
  },
  {
    method: 'GET',
    path: '/address/:address/proof',
    tag: 'accounts',
    summary: 'Merkle membership proof of the account against the current state root',
    description:
      'With ?token=SRC20_…, also the SRC-20 balance of the address and the proof of its state key (token balances are in the state root).',
    params: addr,
    query: { token: str('SRC-20 contract (SRC20_ + 40 hex)') },
    response: obj(
      {
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
        token: obj({
          contract: str(),
          balance: int('token base units (u128)', { maximum: (1n << 128n) - 1n }),
          proof: nullable({ type: 'object' }),
        }),
      },
      { optional: ['token'] },
    ),
    handler: async (ctx, req, p) => {
      const token = req.query.get('token');
      const contract = token ? contractParam(token) : undefined;
      return { body: await accountProof(ctx, addressParam(p.address), contract) };
    },
  },
];
