import {
  DEFAULT_HOLDERS_PAGE,
  DEFAULT_TX_PAGE,
  MAX_HOLDERS_PAGE,
  MAX_TX_PAGE,
  type TokenOpKind,
  getToken,
  listTokens,
  submitTokenOperation,
  tokenBalance,
  tokenBalanceAt,
  tokenHolders,
  tokenTransfers,
} from '../../services/index.js';
import { NotFoundError } from '../../util/index.js';
import { addressParam } from '../params.js';
import { type JsonSchema, address, arr, int, num, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef, RouteHandler } from '../types.js';
import { cacheAt } from '../cache.js';
import { atHeight, atHeightParam, contractParam, listParams, transactionEnvelope } from './common.js';

const tokenAmount = (d?: string): JsonSchema => int(d ?? 'token base units (u128)', { maximum: (1n << 128n) - 1n });

const holdersQuery = {
  limit: int(`holders per page, default ${DEFAULT_HOLDERS_PAGE}, at most ${MAX_HOLDERS_PAGE}`, { minimum: 1 }),
  offset: int('holders to skip (0-based rank)'),
};
const holdersPage = (q: URLSearchParams) => listParams(q, DEFAULT_HOLDERS_PAGE, MAX_HOLDERS_PAGE);

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
  kind: str(undefined, { enum: ['deploy', 'transfer', 'mint', 'burn'] }),
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
const unknown = { 404: 'unknown token contract' };

const transfers: RouteHandler = async (ctx, req, p) => {
  const c = contractParam(p.contract);
  const { offset, limit } = listParams(req.query, DEFAULT_TX_PAGE, MAX_TX_PAGE);
  return { body: await tokenTransfers(ctx, c, offset, limit) };
};

const SUBMIT =
  'to_address must be the zero address and tx.data the operation the path names (400 "expected <Variant> operation in tx.data"); the contract in tx.data must equal the URL\'s (400 "contract in data does not match URL"). The operation is dry-run at admission: a failure (unknown token, insufficient balance, ...) is a 400 with its reason and nothing enters the mempool.';

/** The three token submissions: `{ transaction }` with to_address = zero address and the operation in tx.data. */
function tokenPost(path: string, kind: TokenOpKind, dataExample: string, accepted: JsonSchema): RouteDef {
  return {
    method: 'POST',
    path,
    auth: true,
    write: true,
    tag: 'tokens',
    summary: `Submit a signed token ${kind} (tx.data = ${dataExample})`,
    description: SUBMIT,
    params: path.includes(':contract') ? contract : undefined,
    body: S.submitBody,
    response: accepted,
    handler: async (ctx, req, p) => {
      const c = p.contract === undefined ? undefined : contractParam(p.contract);
      return { body: { success: true, ...(await submitTokenOperation(ctx, transactionEnvelope(req.body), kind, c)) } };
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
    handler: async (ctx) => ({ body: await listTokens(ctx) }),
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
    summary: 'Token balance of an address (after block at_height when given)',
    description: 'With at_height at a finalized height the answer is immutable (Cache-Control immutable, strong ETag).',
    params: { ...contract, addr: S.addressParam },
    query: atHeight,
    statuses: unknown,
    response: obj({ contract: S.contractParam, address: address(), balance: tokenAmount(), symbol: str(), decimals: int() }),
    handler: (ctx, req, p) => {
      const c = contractParam(p.contract);
      const height = atHeightParam(req.query);
      if (height === undefined) return { body: tokenBalance(ctx, c, addressParam(p.addr)) };
      return tokenBalanceAt(ctx, c, addressParam(p.addr), height).then((body) => ({ body, cache: cacheAt(ctx, height) }));
    },
  },
  {
    method: 'GET',
    path: '/tokens/:contract/holders',
    tag: 'tokens',
    summary: 'Holder list (legacy shape: address and balance)',
    params: contract,
    query: holdersQuery,
    statuses: unknown,
    response: obj({ contract: S.contractParam, holders: arr(obj({ address: address(), balance: tokenAmount() })) }),
    handler: async (ctx, req, p) => {
      const { offset, limit } = holdersPage(req.query);
      const h = await tokenHolders(ctx, contractParam(p.contract), offset, limit);
      return { body: { contract: h.contract, holders: h.holders.map(({ address, balance }) => ({ address, balance })) } };
    },
  },
  {
    method: 'GET',
    path: '/tokens/:contract/holders-v2',
    tag: 'tokens',
    summary: 'Holders with their percentage of supply (preferred)',
    params: contract,
    query: holdersQuery,
    statuses: unknown,
    response: obj({
      contract: S.contractParam,
      holders: arr(obj({ address: address(), balance: tokenAmount(), percentage: num('percent of supply') })),
      total: int('number of holders'),
    }),
    handler: async (ctx, req, p) => {
      const { offset, limit } = holdersPage(req.query);
      return { body: await tokenHolders(ctx, contractParam(p.contract), offset, limit) };
    },
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
      contract: S.contractParam,
      name: str(),
      decimals: int(),
      symbol: str(),
      total_supply: tokenAmount(),
      max_supply: tokenAmount(),
      status: { type: 'string', const: 'pending_in_mempool' },
    }),
  ),
  tokenPost('/tokens/:contract/transfer', 'Transfer', '{"Transfer":{"contract","to","amount"}}', S.accepted),
  tokenPost('/tokens/:contract/burn', 'Burn', '{"Burn":{"contract","amount"}}', S.accepted),
];
