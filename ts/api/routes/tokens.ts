import {
  DEFAULT_TX_PAGE,
  MAX_TX_PAGE,
  type TokenOpKind,
  getToken,
  listTokens,
  submitTokenOperation,
  tokenBalance,
  tokenHolders,
  tokenTransfers,
} from '../../services/index.js';
import { NotFoundError } from '../../util/errors.js';
import { addressParam } from '../params.js';
import { type JsonSchema, address, arr, int, num, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { contractParam, listParams, transactionEnvelope } from './common.js';

const tokenAmount = (d?: string): JsonSchema => int(d ?? 'token base units (u128)', { maximum: (1n << 128n) - 1n });

const token = obj({
  contract: S.contractParam,
  name: str(),
  symbol: str(),
  decimals: int(),
  supply: tokenAmount('total supply'),
  max_supply: tokenAmount('0 = uncapped'),
  owner: address('deployer'),
  holders: int(),
  deployed_at_height: int(),
});
const transfer = obj({
  txid: S.txidParam,
  block_index: int(),
  timestamp: int(),
  kind: str(undefined, { enum: ['deploy', 'transfer', 'burn'] }),
  from: address(),
  to: address(),
  amount: tokenAmount(),
});
const transferPage = obj({
  contract: S.contractParam,
  transfers: arr(transfer),
  total: int(),
  limit: int(),
  offset: int(),
  page: int(),
});
const contract = { contract: S.contractParam };
const unknown = { 404: 'unknown token contract (no token exists until the token module is active)' };

const transfers: RouteHandler = (ctx, req, p) => {
  const c = contractParam(p.contract);
  const { offset, limit } = listParams(req.query, DEFAULT_TX_PAGE, MAX_TX_PAGE);
  return { body: tokenTransfers(ctx, c, offset, limit) };
};

const NOT_ACTIVE =
  'Validated completely, then refused with 400 "token operations are not active on this chain yet" until the token module (SRC-20 issue) executes them.';

/** The three token submissions: `{ transaction }` with to_address = zero address and the operation in tx.data. */
function tokenPost(path: string, kind: TokenOpKind, dataExample: string, accepted: JsonSchema): RouteDef {
  return {
    method: 'POST',
    path,
    auth: true,
    write: true,
    tag: 'tokens',
    summary: `Submit a signed token ${kind} (tx.data = ${dataExample})`,
    description: NOT_ACTIVE,
    params: path.includes(':contract') ? contract : undefined,
    body: S.submitBody,
    response: accepted,
    handler: async (ctx, req, p) => {
      const c = p.contract === undefined ? undefined : contractParam(p.contract);
      return { body: await submitTokenOperation(ctx, transactionEnvelope(req.body), kind, c) };
    },
  };
}

export const tokenRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/tokens',
    tag: 'tokens',
    summary: 'Deployed SRC-20 tokens',
    response: obj({ tokens: arr(token), total: int() }),
    handler: (ctx) => ({ body: listTokens(ctx) }),
  },
  {
    method: 'GET',
    path: '/tokens/:contract',
    tag: 'tokens',
    summary: 'Token metadata',
    params: contract,
    statuses: unknown,
    response: token,
    handler: (ctx, _req, p) => {
      const t = getToken(ctx, contractParam(p.contract));
      if (!t) throw new NotFoundError('unknown token contract');
      return { body: t };
    },
  },
  {
    method: 'GET',
    path: '/tokens/:contract/balance/:addr',
    tag: 'tokens',
    summary: 'Token balance of an address',
    params: { ...contract, addr: S.addressParam },
    statuses: unknown,
    response: obj({ contract: S.contractParam, address: address(), balance: tokenAmount(), symbol: str(), decimals: int() }),
    handler: (ctx, _req, p) => {
      const c = contractParam(p.contract);
      return { body: tokenBalance(ctx, c, addressParam(p.addr)) };
    },
  },
  {
    method: 'GET',
    path: '/tokens/:contract/holders',
    tag: 'tokens',
    summary: 'Holder list (legacy shape: address and balance)',
    params: contract,
    statuses: unknown,
    response: obj({ contract: S.contractParam, holders: arr(obj({ address: address(), balance: tokenAmount() })) }),
    handler: (ctx, _req, p) => {
      const h = tokenHolders(ctx, contractParam(p.contract));
      return { body: { contract: h.contract, holders: h.holders.map(({ address, balance }) => ({ address, balance })) } };
    },
  },
  {
    method: 'GET',
    path: '/tokens/:contract/holders-v2',
    tag: 'tokens',
    summary: 'Holders with their percentage of supply (preferred)',
    params: contract,
    statuses: unknown,
    response: obj({
      contract: S.contractParam,
      holders: arr(obj({ address: address(), balance: tokenAmount(), percentage: num('percent of supply') })),
      total: int(),
    }),
    handler: (ctx, _req, p) => ({ body: tokenHolders(ctx, contractParam(p.contract)) }),
  },
  {
    method: 'GET',
    path: '/tokens/:contract/trades',
    tag: 'tokens',
    summary: 'Transfer history, newest first (limit + offset)',
    params: contract,
    query: S.offsetQuery(DEFAULT_TX_PAGE, MAX_TX_PAGE),
    statuses: unknown,
    response: transferPage,
    handler: transfers,
  },
  {
    method: 'GET',
    path: '/tokens/:contract/transfers',
    tag: 'tokens',
    summary: 'Explorer transfer feed, newest first (page + limit, or offset)',
    params: contract,
    query: S.offsetQuery(DEFAULT_TX_PAGE, MAX_TX_PAGE),
    statuses: unknown,
    response: transferPage,
    handler: transfers,
  },
  tokenPost(
    '/tokens/deploy',
    'Deploy',
    '{"Deploy":{"name","symbol","decimals","supply","max_supply"}}',
    obj({
      success: { type: 'boolean', const: true },
      txid: str(),
      deployer: address(),
      name: str(),
      symbol: str(),
      total_supply: tokenAmount(),
      max_supply: tokenAmount(),
      status: { type: 'string', const: 'pending_in_mempool' },
    }),
  ),
  tokenPost('/tokens/:contract/transfer', 'Transfer', '{"Transfer":{"contract","to","amount"}}', S.accepted),
  tokenPost('/tokens/:contract/burn', 'Burn', '{"Burn":{"contract","amount"}}', S.accepted),
];
