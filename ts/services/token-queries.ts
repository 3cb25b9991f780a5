/**
 * SRC-20 tokens (native fungible tokens). The token module arrives with its own issue; until then no token
 * exists, reads answer from that empty state, and token submissions are validated completely and then
 * refused with NotActiveError (never a fake acceptance).
 */
import { decodeOperation } from '../ledger/operations.js';
import { parseSignedTransaction } from '../ledger/transaction.js';
import { ZERO_ADDRESS } from '../ledger/units.js';
import { InvalidParamsError, NotFoundError } from '../util/errors.js';
import { parseJsonExact } from '../util/json.js';
import type { NodeContext } from './context.js';

export const TOKEN_CONTRACT_RE = /^SRC20_[0-9a-fA-F]{40}$/;
/** Token amounts are u128 (base units of the token). */
export const MAX_TOKEN_AMOUNT = (1n << 128n) - 1n;
export const MAX_TOKEN_DECIMALS = 18;
export const MAX_TOKEN_NAME = 64;
export const MAX_TOKEN_SYMBOL = 16;

export const isTokenContract = (s: string): boolean => TOKEN_CONTRACT_RE.test(s);
/** Canonical form: SRC20_ + lowercase hex. */
export const normContract = (s: string): string => `SRC20_${s.slice(6).toLowerCase()}`;

export interface TokenRecord {
  contract: string;
  name: string;
  symbol: string;
  decimals: number;
  supply: bigint;
  max_supply: bigint;
  owner: string;
  holders: number;
  deployed_at_height: number;
}

export function listTokens(_ctx: NodeContext): { tokens: TokenRecord[]; total: number } {
  return { tokens: [], total: 0 };
}

/** Token by contract (canonical form), or null when unknown. */
export function getToken(_ctx: NodeContext, _contract: string): TokenRecord | null {
  return null;
}

function tokenOrThrow(ctx: NodeContext, contract: string): TokenRecord {
  const t = getToken(ctx, contract);
  if (!t) throw new NotFoundError('unknown token contract');
  return t;
}

/** GET /tokens/{contract}/balance/{address}. */
export function tokenBalance(ctx: NodeContext, contract: string, address: string): Record<string, unknown> {
  const t = tokenOrThrow(ctx, contract);
  return { contract: t.contract, address, balance: 0n, symbol: t.symbol, decimals: t.decimals };
}

export interface TokenHolder {
  address: string;
  balance: bigint;
  percentage: number;
}

/** Holders of a token, largest balance first (GET /tokens/{contract}/holders and holders-v2). */
export function tokenHolders(ctx: NodeContext, contract: string): { contract: string; holders: TokenHolder[]; total: number } {
  const t = tokenOrThrow(ctx, contract);
  return { contract: t.contract, holders: [], total: 0 };
}

export interface TokenTransfer {
  txid: string;
  block_index: number;
  timestamp: number;
  kind: 'deploy' | 'transfer' | 'burn';
  from: string;
  to: string;
  amount: bigint;
}

/** Transfers of a token, newest first (GET /tokens/{contract}/trades and transfers). */
export function tokenTransfers(
  ctx: NodeContext,
  contract: string,
  offset: number,
  limit: number,
): { contract: string; transfers: TokenTransfer[]; total: number; limit: number; offset: number; page: number } {
  const t = tokenOrThrow(ctx, contract);
  return { contract: t.contract, transfers: [], total: 0, limit, offset, page: Math.floor(offset / limit) };
}

export type TokenOpKind = 'Deploy' | 'Transfer' | 'Burn';

/**
 * POST /tokens/deploy, /tokens/{contract}/transfer, /tokens/{contract}/burn: the endpoint-specific checks
 * (zero to_address, the variant the path names, the contract in the URL), then the transaction rules
 * every path shares (ledger/rules.ts), which refuse token operations with NotActiveError until the
 * token module runs.
 */
export async function submitTokenOperation(
  ctx: NodeContext,
  raw: unknown,
  expect: TokenOpKind,
  urlContract?: string,
): Promise<{ txid: string; status: 'pending_in_mempool' }> {
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
