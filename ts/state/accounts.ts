import { fromHex } from '../util/index.js';
import { nsChar, nsKey } from './key-ids.js';
import { type KeyStr, type StateOverlay, type StateReader, keyStr } from './state-store.js';

/**
 * State key namespaces (first byte of every state key) of the state itself; each native module owns its
 * own bytes (ts/modules/<name>/keys.ts; the executor checks that no two claim one).
 */
export const NS = {
  meta: 0x00,
  account: 0x01,
  code: 0x02,
  storage: 0x03,
  // SRC-20 tokens: 0x10..0x13 (modules/tokens/keys.ts TOKEN_NS); DPoS staking: 0x20..0x2b (modules/staking/keys.ts
  // STAKING_NS); SRC-721: 0x07 (modules/nft/keys.ts NFT_NS). Modules own their namespace bytes.
} as const;

export interface Account {
  nonce: bigint;
  /** wei; REST shows balance / 1e10 (base units). */
  balance: bigint;
  /** keccak256 of the contract code; absent for accounts without code. */
  codeHash?: Uint8Array;
}

const EMPTY: Account = { nonce: 0n, balance: 0n };

const ACCOUNT_NS = nsChar(NS.account);

export function accountKey(address: string | Uint8Array): KeyStr {
  if (typeof address === 'string') return nsKey(ACCOUNT_NS, address);
  const b = Buffer.allocUnsafe(21);
  b[0] = NS.account;
  b.set(address, 1);
  return keyStr(b);
}

const TWO_128 = 1n << 128n;

/**
 * Fixed layout: nonce u64 BE (8 bytes) || balance u256 BE (32 bytes) [|| code hash (32 bytes) for
 * contracts]. Written and read as 64-bit words (no hex strings): every transaction reads and writes two
 * accounts.
 */
export function encodeAccount(a: Account): Buffer {
  // Its own memory (as Buffer.alloc), not a slice of the shared pool: values outlive the block and are
  // posted to call workers, which would copy a pooled slice's whole slab.
  const b = Buffer.allocUnsafeSlow(a.codeHash ? 72 : 40);
  b.writeBigUInt64BE(a.nonce, 0);
  const n = a.balance;
  if (n < TWO_128) {
    b.fill(0, 8, 24);
    b.writeBigUInt64BE(BigInt.asUintN(64, n >> 64n), 24);
  } else {
    b.writeBigUInt64BE(BigInt.asUintN(64, n >> 192n), 8);
    b.writeBigUInt64BE(BigInt.asUintN(64, n >> 128n), 16);
    b.writeBigUInt64BE(BigInt.asUintN(64, n >> 64n), 24);
  }
  b.writeBigUInt64BE(BigInt.asUintN(64, n), 32);
  if (a.codeHash) b.set(a.codeHash, 40);
  return b;
}

export function decodeAccount(b: Buffer): Account {
  const w0 = b.readBigUInt64BE(8);
  const w1 = b.readBigUInt64BE(16);
  const w2 = b.readBigUInt64BE(24);
  const w3 = b.readBigUInt64BE(32);
  const balance = w0 === 0n && w1 === 0n ? (w2 === 0n ? w3 : (w2 << 64n) | w3) : (w0 << 192n) | (w1 << 128n) | (w2 << 64n) | w3;
  const a: Account = { nonce: b.readBigUInt64BE(0), balance };
  if (b.length >= 72) a.codeHash = b.subarray(40, 72);
  return a;
}

/** State key of a contract's code: NS.code || address. */
export function codeKey(address: string | Uint8Array): KeyStr {
  const b = Buffer.allocUnsafe(21);
  b[0] = NS.code;
  if (typeof address === 'string') b.write(address.slice(2), 1, 'hex');
  else b.set(address, 1);
  return keyStr(b);
}

/** State key of a storage slot: NS.storage || address || slot (32 bytes). */
export function storageKey(address: Uint8Array, slot: Uint8Array): KeyStr {
  const b = Buffer.allocUnsafe(53);
  b[0] = NS.storage;
  b.set(address, 1);
  b.set(slot, 21);
  return keyStr(b);
}

/** The address of a code key (NS.code || address), or null for another key. */
export function addressFromCodeKey(k: KeyStr): string | null {
  if (k.length !== 21 || k.charCodeAt(0) !== NS.code) return null;
  return `0x${Buffer.from(k.slice(1), 'latin1').toString('hex')}`;
}

export function getCode(state: StateReader, address: string): Buffer | undefined {
  return state.get(codeKey(address));
}

export function getAccount(state: StateReader, address: string): Account {
  const raw = state.get(accountKey(address));
  return raw ? decodeAccount(raw) : { ...EMPTY };
}

export function putAccount(state: StateOverlay, address: string, a: Account): void {
  state.set(accountKey(address), encodeAccount(a));
}

/** Addresses of all accounts (rich list, totals). Cost: a scan of the state map. */
export function addressFromAccountKey(k: KeyStr): string | null {
  if (k.length !== 21 || k.charCodeAt(0) !== NS.account) return null;
  return `0x${Buffer.from(k.slice(1), 'latin1').toString('hex')}`;
}

export const accountKeyBytes = (address: string): Buffer => Buffer.concat([Buffer.from([NS.account]), fromHex(address)]);
