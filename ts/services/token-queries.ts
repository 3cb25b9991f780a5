/**
 * SRC-20 tokens (native fungible tokens). The token module arrives with its own issue; until then no token
 * exists, reads answer from that empty state, and token submissions are validated completely and then
 * refused with NotActiveError (never a fake acceptance).
 */
import { checkTransactionIntegrity, parseSignedTransaction } from '../ledger/transaction.js';
import { ZERO_ADDRESS } from '../ledger/units.js';
import { InvalidParamsError, NotFoundError } from '../util/errors.js';
import { isAddress } from '../util/hex.js';
import { asUint, parseJsonExact } from '../util/json.js';
import type { NodeContext } from './context.js';
import { NotActiveError, TOKENS_NOT_ACTIVE } from './not-active.js';

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

export type TokenOperation =
  | { Deploy: { name: string; symbol: string; decimals: number; supply: bigint; max_supply: bigint } }
  | { Transfer: { contract: string; to: string; amount: bigint } }
  | { Burn: { contract: string; amount: bigint } };

const FIELDS: Record<TokenOpKind, string[]> = {
  Deploy: ['name', 'symbol', 'decimals', 'supply', 'max_supply'],
  Transfer: ['contract', 'to', 'amount'],
  Burn: ['contract', 'amount'],
};

/**
 * tx.data of a token operation: JSON with exactly one key naming the variant, e.g.
 * {"Deploy":{"name":"Gold","symbol":"GLD","decimals":8,"supply":1000000,"max_supply":0}},
 * {"Transfer":{"contract":"SRC20_…","to":"0x…","amount":5}}, {"Burn":{"contract":"SRC20_…","amount":5}}.
 */
export function parseTokenOperation(data: string, expect: TokenOpKind): TokenOperation {
  const wrongVariant = new InvalidParamsError(`expected ${expect} operation in tx.data`);
  let v: unknown;
  try {
    v = parseJsonExact(data);
  } catch {
    throw wrongVariant;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw wrongVariant;
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== expect) throw wrongVariant;
  const body = (v as Record<string, unknown>)[expect];
  const bad = (msg: string): InvalidParamsError => new InvalidParamsError(`invalid ${expect} operation: ${msg}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('payload must be an object');
  const o = body as Record<string, unknown>;
  for (const f of FIELDS[expect]) if (!(f in o)) throw bad(`missing field ${f}`);
  for (const f of Object.keys(o)) if (!FIELDS[expect].includes(f)) throw bad(`unknown field ${f}`);
  const uint = (f: string, max = MAX_TOKEN_AMOUNT, min = 0n): bigint => {
    const n = asUint(o[f], max);
    if (n === undefined || n < min) throw bad(`${f} must be an integer from ${min} to ${max}`);
    return n;
  };
  const text = (f: string, max: number): string => {
    const s = o[f];
    if (typeof s !== 'string' || s.trim().length === 0 || s.length > max)
      throw bad(`${f} must be a non-empty string of at most ${max} characters`);
    return s;
  };
  const contract = (): string => {
    const c = o.contract;
    if (typeof c !== 'string' || !isTokenContract(c)) throw bad('contract must be SRC20_ + 40 hex characters');
    return normContract(c);
  };
  if (expect === 'Deploy') {
    const supply = uint('supply');
    const maxSupply = uint('max_supply');
    if (maxSupply !== 0n && maxSupply < supply) throw bad('max_supply must be 0 (uncapped) or at least supply');
    return {
      Deploy: {
        name: text('name', MAX_TOKEN_NAME),
        symbol: text('symbol', MAX_TOKEN_SYMBOL),
        decimals: Number(uint('decimals', BigInt(MAX_TOKEN_DECIMALS))),
        supply,
        max_supply: maxSupply,
      },
    };
  }
  if (expect === 'Transfer') {
    if (!isAddress(o.to)) throw bad('to must be 0x + 40 hex characters');
    return { Transfer: { contract: contract(), to: o.to.toLowerCase(), amount: uint('amount', MAX_TOKEN_AMOUNT, 1n) } };
  }
  return { Burn: { contract: contract(), amount: uint('amount', MAX_TOKEN_AMOUNT, 1n) } };
}

/**
 * POST /tokens/deploy, /tokens/{contract}/transfer, /tokens/{contract}/burn: the full check of the submission
 * (shape, zero to_address, variant, contract, chain id, txid, public key) and then NotActiveError, since no
 * token module executes the operation yet.
 */
export function submitTokenOperation(ctx: NodeContext, raw: unknown, expect: TokenOpKind, urlContract?: string): never {
  const tx = parseSignedTransaction(raw);
  if (tx.to_address.toLowerCase() !== ZERO_ADDRESS) {
    throw new InvalidParamsError('to_address must be the zero address (TOKEN_OP_ADDRESS) for token operations');
  }
  const op = parseTokenOperation(tx.data, expect);
  if (urlContract !== undefined && ('Transfer' in op || 'Burn' in op)) {
    const inData = 'Transfer' in op ? op.Transfer.contract : op.Burn.contract;
    if (inData !== normContract(urlContract)) throw new InvalidParamsError('contract in data does not match URL');
  }
  checkTransactionIntegrity(tx, ctx.chain.params.chainId);
  throw new NotActiveError(TOKENS_NOT_ACTIVE);
}
