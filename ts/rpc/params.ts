import type { BlockRef, BlockTag } from '../services/index.js';
import { isAddress, isHash } from '../util/index.js';
import { type ParamSpec, invalidParams } from './types.js';

const TAGS = new Set(['earliest', 'latest', 'pending', 'safe', 'finalized']);
/** Longest quantity accepted: 256 bits (geth's hexutil.Big limit). */
const MAX_QUANTITY_DIGITS = 64;
const STORAGE_KEY_BYTES = 32;

export type { BlockTag } from '../services/index.js';
const HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/** Validate positional params against a method's spec; messages follow geth's wording. */
export function checkParams(specs: ParamSpec[], params: unknown[]): void {
  if (params.length > specs.length) throw invalidParams(`too many arguments, want at most ${specs.length}`);
  specs.forEach((spec, i) => {
    const optional = spec.endsWith('?');
    const kind = optional ? spec.slice(0, -1) : spec;
    const v = params[i];
    if (v === undefined || v === null) {
      if (!optional) throw invalidParams(`missing value for required argument ${i}`);
      return;
    }
    const bad = (what: string) => invalidParams(`invalid argument ${i}: ${what}`);
    switch (kind) {
      case 'address':
        if (!isAddress(v)) throw bad('address must be 0x + 40 hex characters (42 characters)');
        break;
      case 'hash':
        if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(v)) throw bad('hash must be 0x + 64 hex characters');
        break;
      case 'blockTag':
        parseBlockTag(v, i);
        break;
      case 'blockRef':
        if (!(typeof v === 'object' || isHash(v))) parseBlockTag(v, i);
        break;
      case 'bool':
        if (typeof v !== 'boolean') throw bad('expected a boolean');
        break;
      case 'quantity':
        parseQuantity(v, i);
        break;
      case 'storageKey':
        parseStorageKey(v, i);
        break;
      case 'object':
        if (typeof v !== 'object' || Array.isArray(v)) throw bad('expected an object');
        break;
      case 'array':
        if (!Array.isArray(v)) throw bad('expected an array');
        break;
    }
  });
}

/** Why a string is not a QUANTITY, in geth's hexutil words; null when it is one. */
function quantityProblem(s: string): string | null {
  if (!/^0[xX]/.test(s)) return 'hex string without 0x prefix';
  const digits = s.slice(2);
  if (digits.length === 0) return 'hex string "0x"';
  if (!/^[0-9a-fA-F]+$/.test(digits)) return 'invalid hex string';
  if (digits.length > 1 && digits[0] === '0') return 'hex number with leading zero digits';
  if (digits.length > MAX_QUANTITY_DIGITS) return 'hex number > 256 bits';
  return null;
}

/**
 * Hex quantity (0x-prefixed, no leading zeros, at most 256 bits) or a plain non-negative JSON integer (a
 * leniency geth does not have; clients never send it, scripts sometimes do).
 */
export function parseQuantity(v: unknown, i = 0): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'bigint' && v >= 0n) return v;
  if (typeof v === 'string') {
    const problem = quantityProblem(v);
    if (problem === null) return BigInt(`0x${v.slice(2)}`);
    throw invalidParams(`invalid argument ${i}: ${problem}`);
  }
  throw invalidParams(`invalid argument ${i}: expected a hex quantity such as "0x1"`);
}

export function parseBlockTag(v: unknown, i = 0): BlockTag {
  if (typeof v === 'string' && TAGS.has(v)) return v as BlockTag;
  const n = parseQuantity(v, i);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidParams(`invalid argument ${i}: hex number > 64 bits`);
  return Number(n);
}

/**
 * A block parameter that may also name a hash: a tag or number, 0x + 64 hex, or EIP-1898's
 * { blockHash } / { blockNumber } object (parameter `i`, for the error message).
 */
export function blockRefOf(ref: unknown, i: number): BlockRef {
  if (typeof ref === 'string' && HASH_RE.test(ref)) return { hash: ref };
  if (typeof ref === 'object' && ref !== null) {
    const o = ref as { blockHash?: unknown; blockNumber?: unknown };
    if (o.blockHash !== undefined) {
      if (typeof o.blockHash !== 'string' || !HASH_RE.test(o.blockHash))
        throw invalidParams(`invalid argument ${i}: blockHash must be 0x + 64 hex`);
      return { hash: o.blockHash };
    }
    if (o.blockNumber !== undefined) return parseBlockTag(o.blockNumber, i);
    throw invalidParams(`invalid argument ${i}: expected blockHash or blockNumber`);
  }
  return parseBlockTag(ref, i);
}

/**
 * A storage slot as geth reads it: DATA, not QUANTITY. Up to 32 bytes of hex, leading zeros allowed (the
 * 66-character form ethers and viem send), an odd digit count padded on the left, the 0x prefix optional.
 */
export function parseStorageKey(v: unknown, i = 1): bigint {
  if (typeof v !== 'string') throw invalidParams(`invalid argument ${i}: storage key must be a hex string`);
  const digits = /^0[xX]/.test(v) ? v.slice(2) : v;
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw invalidParams(`invalid hex in storage key: ${JSON.stringify(v)}`);
  if (Math.ceil(digits.length / 2) > STORAGE_KEY_BYTES) {
    throw invalidParams(`storage key too long (want at most ${STORAGE_KEY_BYTES} bytes): ${JSON.stringify(v)}`);
  }
  return digits.length === 0 ? 0n : BigInt(`0x${digits}`);
}
