/**
 * SRC-20 state: token records, balances, allowances and holder counts, all in the authenticated state
 * (inside the state root, provable like accounts) because every validator must verify them.
 *
 * Keys: keys.ts (the namespace bytes this module owns).
 */
import { RLP } from '@ethereumjs/rlp';
import type { KeyStr, StateOverlay, StateReader } from '../../state/index.js';
import { bigToBytes, bytesToBig, toHex } from '../../util/index.js';
import { holdersKey, tokenAllowanceKey, tokenBalanceKey, tokenKey } from './keys.js';

export interface TokenRecord {
  /** `SRC20_` + 40 lowercase hex. */
  contract: string;
  name: string;
  symbol: string;
  decimals: number;
  /** Current total supply (token base units): initial supply + mints - burns. */
  supply: bigint;
  /** 0 = uncapped. */
  max_supply: bigint;
  /** The deployer: the only account that may mint. */
  owner: string;
  deployed_at_height: number;
}

export function encodeTokenRecord(t: TokenRecord): Buffer {
  return Buffer.from(
    RLP.encode([
      Buffer.from(t.name, 'utf8'),
      Buffer.from(t.symbol, 'utf8'),
      bigToBytes(BigInt(t.decimals)),
      bigToBytes(t.supply),
      bigToBytes(t.max_supply),
      Buffer.from(t.owner.slice(2), 'hex'),
      bigToBytes(BigInt(t.deployed_at_height)),
    ]),
  );
}

export function decodeTokenRecord(contract: string, raw: Uint8Array): TokenRecord {
  const f = RLP.decode(raw) as Uint8Array[];
  const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
  return {
    contract,
    name: text(f[0]),
    symbol: text(f[1]),
    decimals: Number(bytesToBig(f[2])),
    supply: bytesToBig(f[3]),
    max_supply: bytesToBig(f[4]),
    owner: `0x${toHex(f[5])}`,
    deployed_at_height: Number(bytesToBig(f[6])),
  };
}

export function getToken(state: StateReader, contract: string): TokenRecord | null {
  const raw = state.get(tokenKey(contract));
  return raw ? decodeTokenRecord(contract, raw) : null;
}

export const tokenExists = (state: StateReader, contract: string): boolean => state.get(tokenKey(contract)) !== undefined;

export const putToken = (state: StateOverlay, t: TokenRecord): void => state.set(tokenKey(t.contract), encodeTokenRecord(t));

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** u128 as 16 bytes BE (amounts up to 2^53 written as a number: two bigint buffer writes cost more). */
export function encodeU128(n: bigint): Buffer {
  const b = Buffer.allocUnsafe(16);
  if (n >= 0n && n <= MAX_SAFE) {
    const x = Number(n);
    b.fill(0, 0, 8);
    b.writeUInt32BE(Math.floor(x / 2 ** 32), 8);
    b.writeUInt32BE(x >>> 0, 12);
    return b;
  }
  b.writeBigUInt64BE(n >> 64n, 0);
  b.writeBigUInt64BE(n & 0xffffffffffffffffn, 8);
  return b;
}

export function decodeU128(b: Uint8Array): bigint {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const hi = buf.readBigUInt64BE(0);
  const lo = buf.readBigUInt64BE(8);
  return hi === 0n ? lo : (hi << 64n) | lo;
}

/** The amount under a key (0 when absent): balances and allowances. */
export function getAmount(state: StateReader, k: KeyStr): bigint {
  const raw = state.get(k);
  return raw ? decodeU128(raw) : 0n;
}

function putAmount(state: StateOverlay, k: KeyStr, n: bigint): void {
  if (n === 0n) state.delete(k);
  else state.set(k, encodeU128(n));
}

export const tokenBalance = (state: StateReader, contract: string, holder: string): bigint =>
  getAmount(state, tokenBalanceKey(contract, holder));

export const tokenAllowance = (state: StateReader, contract: string, owner: string, spender: string): bigint =>
  getAmount(state, tokenAllowanceKey(contract, owner, spender));

export const putTokenAllowance = (state: StateOverlay, contract: string, owner: string, spender: string, n: bigint): void =>
  putAmount(state, tokenAllowanceKey(contract, owner, spender), n);

export function tokenHolderCount(state: StateReader, contract: string): number {
  const raw = state.get(holdersKey(contract));
  return raw ? Number(raw.readBigUInt64BE(0)) : 0;
}

/** Set a balance, keeping the holder count (non-zero balances) in step. */
export const putTokenBalance = (state: StateOverlay, contract: string, holder: string, before: bigint, after: bigint): void =>
  putTokenBalanceAt(state, contract, tokenBalanceKey(contract, holder), before, after);

/** putTokenBalance with the balance key already built (a transfer reads and writes each balance once). */
export function putTokenBalanceAt(state: StateOverlay, contract: string, k: KeyStr, before: bigint, after: bigint): void {
  putAmount(state, k, after);
  const delta = (after > 0n ? 1 : 0) - (before > 0n ? 1 : 0);
  if (delta !== 0) {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64BE(BigInt(tokenHolderCount(state, contract) + delta));
    state.set(holdersKey(contract), b);
  }
}
