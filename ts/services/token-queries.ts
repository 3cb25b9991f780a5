/**
 * SRC-20 tokens (native fungible tokens): records and balances read from the authenticated state, holder
 * lists from the state index (maintained at commit), transfer feeds from the native event index, and the
 * three token submissions with the spec's endpoint errors.
 */
import {
  type TokenView,
  getToken as readToken,
  tokenBalance as readBalance,
  tokenBalanceView,
  tokenContractAddress,
  tokenTransferRow,
  tokenView,
} from '../modules/index.js';
import { TOKEN_CONTRACT_RE, decodeOperation, parseSignedTransaction, ZERO_ADDRESS } from '../ledger/index.js';
import { InvalidParamsError, NotFoundError, parseJsonExact } from '../util/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { accountTokens } from './evm-tokens.js';
import { stateIndex } from '../indexes/index.js';

export { TOKEN_CONTRACT_RE };
/** Token amounts are u128 (base units of the token). */
export const MAX_TOKEN_AMOUNT = (1n << 128n) - 1n;
export const MAX_TOKEN_DECIMALS = 18;
export const MAX_TOKEN_NAME = 64;
export const MAX_TOKEN_SYMBOL = 16;
/** Largest holder list page. */
export const MAX_HOLDERS_PAGE = 1000;
export const DEFAULT_HOLDERS_PAGE = 100;

export const isTokenContract = (s: string): boolean => TOKEN_CONTRACT_RE.test(s);
/** Canonical form: SRC20_ + lowercase hex. */
export const normContract = (s: string): string => `SRC20_${s.slice(6).toLowerCase()}`;

/** A token as the API shows it: the record and its number of holders (the tokens module's query). */
export type TokenRecord = TokenView;

/** GET /tokens: every deployed token, oldest first. */
export async function listTokens(ctx: ChainContext): Promise<{ tokens: TokenRecord[]; total: number }> {
  const idx = await stateIndex(ctx);
  const tokens: TokenRecord[] = [];
  for (const c of idx.tokens) {
    const t = tokenView(ctx.chain.state, c);
    if (t) tokens.push(t);
  }
  tokens.sort((a, b) => a.deployed_at_height - b.deployed_at_height || (a.contract < b.contract ? -1 : 1));
  return { tokens, total: tokens.length };
}

/** Number of deployed tokens (GET /chain/info deployed_tokens). */
export async function deployedTokenCount(ctx: ChainContext): Promise<number> {
  return (await stateIndex(ctx)).tokens.size;
}

/** Token by contract (canonical form), or null when unknown. */
export function getToken(ctx: ChainContext, contract: string): TokenRecord | null {
  return tokenView(ctx.chain.state, contract);
}

function tokenOrThrow(ctx: ChainContext, contract: string): TokenRecord {
  const t = getToken(ctx, contract);
  if (!t) throw new NotFoundError('unknown token contract');
  return t;
}

/** GET /tokens/{contract}/balance/{address}. */
export function tokenBalance(ctx: ChainContext, contract: string, address: string): Record<string, unknown> {
  return tokenBalanceView(ctx.chain.state, tokenOrThrow(ctx, contract), address);
}

export interface TokenHolder {
  address: string;
  balance: bigint;
  percentage: number;
}

/** Percent of a total, 6 decimals. */
export const percentOf = (part: bigint, total: bigint): number =>
  total > 0n ? Number((part * 100_000_000n) / total) / 1_000_000 : 0;

/** Holders of a token, largest balance first (GET /tokens/{contract}/holders and holders-v2). */
export async function tokenHolders(
  ctx: ChainContext,
  contract: string,
  offset = 0,
  limit = DEFAULT_HOLDERS_PAGE,
): Promise<{ contract: string; holders: TokenHolder[]; total: number }> {
  const t = tokenOrThrow(ctx, contract);
  const ranked = (await stateIndex(ctx)).holdersOf(t.contract);
  const holders = (ranked?.top(limit, offset) ?? []).map((h) => ({ ...h, percentage: percentOf(h.balance, t.supply) }));
  return { contract: t.contract, holders, total: ranked?.size ?? 0 };
}

export interface TokenTransfer {
  txid: string;
  block_index: number;
  timestamp: number;
  kind: 'deploy' | 'transfer' | 'mint' | 'burn';
  from: string;
  to: string;
  amount: bigint;
}

export { tokenTransferRow };

/** Rows of an event feed term (`token:<contract>` or `token-account:<address>`), newest first. */
async function transferFeed(ctx: ChainContext, term: string, offset: number, limit: number): Promise<AccountTokenTransfer[]> {
  const events = await ctx.chain.blocks.indexedEvents(term, offset, limit);
  const blocks = ctx.chain.blocks.getBlocks([...new Set(events.map((e) => e.height))]);
  const timestamps = new Map(blocks.flatMap((b) => (b ? [[b.index, b.timestamp] as const] : [])));
  const transfers: AccountTokenTransfer[] = [];
  for (const e of events) {
    const row = tokenTransferRow(e.event);
    if (!row) continue;
    transfers.push({
      txid: e.txid,
      block_index: e.height,
      timestamp: timestamps.get(e.height) ?? 0,
      contract: e.event.fields.contract,
      ...row,
    });
  }
  return transfers;
}

/** Transfers of a token (deploy, transfers, mints, burns), newest first (GET /tokens/{contract}/trades and transfers). */
export async function tokenTransfers(
  ctx: ChainContext,
  contract: string,
  offset: number,
  limit: number,
): Promise<{ contract: string; transfers: TokenTransfer[]; total: number; limit: number; offset: number; page: number }> {
  const t = tokenOrThrow(ctx, contract);
  const transfers: TokenTransfer[] = (await transferFeed(ctx, `token:${t.contract}`, offset, limit)).map(
    ({ contract: _, ...row }) => row,
  );
  const total = tokenTransferCount(ctx, t.contract);
  return { contract: t.contract, transfers, total, limit, offset, page: Math.floor(offset / limit) };
}

/** A token balance movement an address took part in, with the token it moved. */
export interface AccountTokenTransfer extends TokenTransfer {
  contract: string;
}

/** Number of SRC-20 balance movements an address took part in (the length of its feed). */
export function accountTokenTransferCount(ctx: ChainContext, address: string): number {
  return ctx.chain.blocks.eventIndex.count(`token-account:${address.toLowerCase()}`);
}

/** SRC-20 balance movements of an address (sent, received, minted to it, burned by it), newest first, any token. */
export async function accountTokenTransfers(
  ctx: ChainContext,
  address: string,
  offset: number,
  limit: number,
): Promise<{ address: string; transfers: AccountTokenTransfer[]; total: number }> {
  const a = address.toLowerCase();
  const term = `token-account:${a}`;
  return {
    address: a,
    transfers: await transferFeed(ctx, term, offset, limit),
    total: accountTokenTransferCount(ctx, a),
  };
}

/** Number of balance movements (deploy, transfers, mints, burns) of a token: the length of its transfer feed. */
export function tokenTransferCount(ctx: ChainContext, contract: string): number {
  return ctx.chain.blocks.eventIndex.count(`token:${contract}`);
}

export interface AccountTokenHolding {
  contract: string;
  name: string;
  symbol: string;
  decimals: number;
  balance: bigint;
}

/** SRC-20 tokens an address holds (non-zero balances), from the state index. */
export async function accountSrc20Tokens(ctx: ChainContext, address: string): Promise<AccountTokenHolding[]> {
  const a = address.toLowerCase();
  const out: AccountTokenHolding[] = [];
  for (const c of (await stateIndex(ctx)).tokensOf(a)) {
    const t = readToken(ctx.chain.state, c);
    if (!t) continue;
    out.push({ contract: c, name: t.name, symbol: t.symbol, decimals: t.decimals, balance: readBalance(ctx.chain.state, c, a) });
  }
  return out;
}

/**
 * GET /accounts/{address}/tokens: SRC-20 holdings (state index) first, then the EVM token-standard
 * holdings (log index + balanceOf), each row naming its standard.
 */
export async function accountTokenHoldings(
  ctx: ChainContext,
  address: string,
): Promise<{ address: string; tokens: Record<string, unknown>[] }> {
  const native = (await accountSrc20Tokens(ctx, address)).map((t) => ({
    standard: 'SRC-20',
    ...t,
    balance: t.balance.toString(),
  }));
  const evm = await accountTokens(ctx, address);
  return { address: evm.address, tokens: [...native, ...evm.tokens.map((t) => ({ standard: 'ERC-20', ...t }))] };
}

export type TokenOpKind = 'Deploy' | 'Transfer' | 'Burn';

/**
 * POST /tokens/deploy, /tokens/{contract}/transfer, /tokens/{contract}/burn: the endpoint-specific checks
 * (zero to_address, the variant the path names, the contract in the URL), then the transaction rules
 * every path shares (ledger/rules.ts) and the admission dry-run of the operation.
 */
export async function submitTokenOperation(
  ctx: NodeContext,
  raw: unknown,
  expect: TokenOpKind,
  urlContract?: string,
): Promise<Record<string, unknown>> {
  const tx = parseSignedTransaction(raw);
  if (tx.to_address.toLowerCase() !== ZERO_ADDRESS) {
    throw new InvalidParamsError('to_address must be the zero address (TOKEN_OP_ADDRESS) for token operations');
  }
  if (variantOf(tx.data) !== expect) throw new InvalidParamsError(`expected ${expect} operation in tx.data`);
  let op: ReturnType<typeof decodeOperation>;
  try {
    op = decodeOperation(tx.data);
  } catch (err) {
    throw new InvalidParamsError((err as Error).message);
  }
  if (urlContract !== undefined && op.fields.contract !== undefined && op.fields.contract !== normContract(urlContract)) {
    throw new InvalidParamsError('contract in data does not match URL');
  }
  await ctx.admission.submit(tx);
  if (expect === 'Deploy') {
    return {
      txid: tx.txid,
      deployer: tx.from_address,
      contract: tokenContractAddress(tx.from_address, tx.nonce),
      name: op.fields.name,
      symbol: op.fields.symbol,
      decimals: Number(op.fields.decimals),
      total_supply: op.fields.supply,
      max_supply: op.fields.max_supply,
      status: 'pending_in_mempool',
    };
  }
  return { txid: tx.txid, status: 'pending_in_mempool' };
}

/** The single top-level key of a JSON object, or null (the strict decoder reports the details). */
function variantOf(data: string): string | null {
  try {
    const v = parseJsonExact(data);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
    const keys = Object.keys(v);
    return keys.length === 1 ? keys[0] : null;
  } catch {
    return null;
  }
}
