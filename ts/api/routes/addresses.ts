import {
  DEFAULT_RICHLIST,
  DEFAULT_TX_PAGE,
  MAX_RICHLIST,
  MAX_TX_PAGE,
  accountCode,
  accountTokenHoldings,
  addressHistory,
  addressInfo,
  richList,
  walletView,
} from '../../services/index.js';
import { addressParam } from '../params.js';
import { address, amount, arr, bool, hash, int, nullable, num, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { limitParam, listParams } from './common.js';

const history: RouteHandler = async (ctx, req, p) => {
  const a = addressParam(p.address);
  const { offset, limit } = listParams(req.query, DEFAULT_TX_PAGE, MAX_TX_PAGE);
  return { body: await addressHistory(ctx, a, offset, limit) };
};

const topHolders: RouteHandler = async (ctx, req) => ({
  body: await richList(ctx, limitParam(req.query, DEFAULT_RICHLIST, MAX_RICHLIST)),
});

const addr = { address: S.addressParam };
const activity = nullable(obj({ height: int(), timestamp: int(), txid: hash() }));

export const addressRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts/:address/history',
    tag: 'accounts',
    summary: 'Confirmed transactions sent or received, newest first',
    params: addr,
    query: S.offsetQuery(DEFAULT_TX_PAGE, MAX_TX_PAGE),
    response: S.historyPage,
    handler: history,
  },
  {
    method: 'GET',
    path: '/address/:address/history',
    tag: 'accounts',
    summary: 'Same as /accounts/{address}/history (limit + offset, or page)',
    params: addr,
    query: S.offsetQuery(DEFAULT_TX_PAGE, MAX_TX_PAGE),
    response: S.historyPage,
    handler: history,
  },
  {
    method: 'GET',
    path: '/accounts/:address/tokens',
    tag: 'accounts',
    summary:
      'Tokens held: SRC-20 balances (non-zero), then EVM token-standard (ERC-20-like) contracts that sent the address a Transfer, with a non-zero balanceOf',
    params: addr,
    response: obj({
      address: address(),
      tokens: arr(
        obj({
          standard: str('SRC-20 (native token) or ERC-20 (EVM contract)', { enum: ['SRC-20', 'ERC-20'] }),
          contract: str('SRC20_ + 40 hex, or the EVM contract address'),
          name: nullable(str('name(), null when the contract does not answer')),
          symbol: nullable(str('symbol(), null when the contract does not answer')),
          decimals: nullable(int('decimals(), null when the contract does not answer', { maximum: 255 })),
          balance: str('balanceOf(address) in token base units, decimal string', { pattern: '^[0-9]+$' }),
        }),
      ),
    }),
    handler: async (ctx, _req, p) => ({ body: await accountTokenHoldings(ctx, addressParam(p.address)) }),
  },
  {
    method: 'GET',
    path: '/accounts/:address/code',
    tag: 'accounts',
    summary: 'Contract bytecode (runtime code in state), "0x" when the account is not a contract',
    params: addr,
    response: obj({ address: address(), code: str('0x-prefixed hex', { pattern: '^0x([0-9a-f]{2})*$' }) }),
    handler: (ctx, _req, p) => {
      const a = addressParam(p.address);
      return { body: { address: a, code: accountCode(ctx, a) } };
    },
  },
  {
    method: 'GET',
    path: '/accounts/top',
    tag: 'accounts',
    summary: 'Top holders by balance (same body as /richlist)',
    query: { limit: int(`holders, default ${DEFAULT_RICHLIST}, at most ${MAX_RICHLIST}`, { minimum: 1 }) },
    response: S.holdersList,
    handler: topHolders,
  },
  {
    method: 'GET',
    path: '/richlist',
    tag: 'stats',
    summary: 'Top holders with their share of the circulating supply',
    query: { limit: int(`holders, default ${DEFAULT_RICHLIST}, at most ${MAX_RICHLIST}`, { minimum: 1 }) },
    response: S.holdersList,
    handler: topHolders,
  },
  {
    method: 'GET',
    path: '/address/:address/info',
    tag: 'accounts',
    summary: 'Balance, nonce, transaction count and contract flag (is_contract: the account has code)',
    params: addr,
    response: obj({ address: address(), balance: amount(), nonce: int(), tx_count: int(), is_contract: bool() }),
    handler: (ctx, _req, p) => ({ body: addressInfo(ctx, addressParam(p.address)) }),
  },
  {
    method: 'GET',
    path: '/wallets/:address',
    tag: 'accounts',
    summary: 'Combined wallet view: balance, nonces, transaction count and an activity summary',
    params: addr,
    response: obj({
      address: address(),
      balance: amount(),
      balance_native: num('coins'),
      nonce: int('committed nonce'),
      pending_nonce: int('next nonce to sign: committed + pending'),
      tx_count: int(),
      is_contract: bool(),
      tokens: arr(obj({ contract: S.contractParam, balance: int() })),
      summary: obj({
        pending_transactions: int(),
        pending_spend: amount('amount + fee of the pending transactions'),
        first_transaction: activity,
        last_transaction: activity,
        is_validator: bool(),
        blocks_produced: int(),
        token_count: int(),
      }),
    }),
    handler: async (ctx, _req, p) => ({ body: await walletView(ctx, addressParam(p.address)) }),
  },
];
