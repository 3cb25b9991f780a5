/**
 * SRC-20 state keys (the Cosmos SDK's `types/keys.go`): the namespace bytes this module owns (the first
 * byte of every key it writes) and the keys built on them. Contracts and holders are their 20 id bytes.
 *
 * - token          || contract20                          -> record (RLP: name, symbol, decimals, supply, max_supply, owner, height)
 * - tokenBalance   || contract20 || holder20              -> u128 BE (16 bytes); absent when zero
 * - tokenAllowance || contract20 || owner20 || spender20  -> u128 BE (16 bytes); absent when zero
 * - tokenHolders   || contract20                          -> u64 BE number of non-zero balances
 */
import { keccak256 } from '../../crypto/index.js';
import { type KeyStr, PairKeyCache, id20, nsChar } from '../../state/index.js';
import { toHex } from '../../util/index.js';

/** The namespace bytes of SRC-20 state (inside the state root). */
export const TOKEN_NS = {
  token: 0x10,
  tokenBalance: 0x11,
  tokenAllowance: 0x12,
  tokenHolders: 0x13,
} as const;

export const CONTRACT_PREFIX = 'SRC20_';
const DOMAIN = Buffer.from('SRC20', 'utf8');

/**
 * The contract address of a deploy: `SRC20_` + the last 20 bytes of keccak256("SRC20" || deployer (20
 * bytes) || nonce (u64 BE)), the deploy transaction's nonce. Like an EVM CREATE address it depends only
 * on the deployer and its nonce, so a client knows the address before the block; the domain prefix keeps
 * it apart from any EVM address.
 */
export function tokenContractAddress(deployer: string, nonce: bigint): string {
  const pre = Buffer.allocUnsafe(DOMAIN.length + 28);
  DOMAIN.copy(pre, 0);
  pre.write(deployer.slice(2), DOMAIN.length, 'hex');
  pre.writeBigUInt64BE(nonce, DOMAIN.length + 20);
  return CONTRACT_PREFIX + toHex(keccak256(pre).subarray(12));
}

/** The 20 id bytes of a contract (`SRC20_…`) or an address (`0x…`) as a latin1 key part (cached). */
const idPart = (id: string): string => id20(id, id.charCodeAt(0) === 0x30 /* '0' of 0x */ ? 2 : CONTRACT_PREFIX.length);

const NS_CHAR = {
  token: nsChar(TOKEN_NS.token),
  balance: nsChar(TOKEN_NS.tokenBalance),
  allowance: nsChar(TOKEN_NS.tokenAllowance),
  holders: nsChar(TOKEN_NS.tokenHolders),
};

const balanceKeys = new PairKeyCache((contract, holder) => NS_CHAR.balance + idPart(contract) + idPart(holder));

export const tokenKey = (contract: string): KeyStr => NS_CHAR.token + idPart(contract);
/** A holder's balance key (cached: a transfer reads and writes two; see PairKeyCache). */
export const tokenBalanceKey = (contract: string, holder: string): KeyStr => balanceKeys.get(contract, holder);
export const tokenAllowanceKey = (contract: string, owner: string, spender: string): KeyStr =>
  NS_CHAR.allowance + idPart(contract) + idPart(owner) + idPart(spender);
/** The key of a token's holder count. */
export const holdersKey = (contract: string): KeyStr => NS_CHAR.holders + idPart(contract);

/** Decode a balance key: [contract, holder], or null for another key. */
export function parseTokenBalanceKey(k: KeyStr): [string, string] | null {
  if (k.length !== 41 || k.charCodeAt(0) !== TOKEN_NS.tokenBalance) return null;
  const b = Buffer.from(k, 'latin1');
  return [CONTRACT_PREFIX + b.toString('hex', 1, 21), `0x${b.toString('hex', 21, 41)}`];
}

/** Decode a token record key: the contract, or null for another key. */
export function parseTokenKey(k: KeyStr): string | null {
  if (k.length !== 21 || k.charCodeAt(0) !== TOKEN_NS.token) return null;
  return CONTRACT_PREFIX + Buffer.from(k, 'latin1').toString('hex', 1, 21);
}
