import { isAddress, isHash } from '../util/hex.js';
import { type ParamSpec, invalidParams } from './types.js';

const QUANTITY_RE = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const TAGS = new Set(['earliest', 'latest', 'pending', 'safe', 'finalized']);

export type BlockTag = 'earliest' | 'latest' | 'pending' | 'safe' | 'finalized' | number;

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
      case 'object':
        if (typeof v !== 'object' || Array.isArray(v)) throw bad('expected an object');
        break;
      case 'array':
        if (!Array.isArray(v)) throw bad('expected an array');
        break;
    }
  });
}

/** Hex quantity (0x-prefixed, no leading zeros) or a plain non-negative JSON integer. */
export function parseQuantity(v: unknown, i = 0): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'bigint' && v >= 0n) return v;
  if (typeof v === 'string' && QUANTITY_RE.test(v) && v.length <= 66) return BigInt(v);
  throw invalidParams(`invalid argument ${i}: hex string without leading zero digits expected`);
}

export function parseBlockTag(v: unknown, i = 0): BlockTag {
  if (typeof v === 'string' && TAGS.has(v)) return v as BlockTag;
  const n = parseQuantity(v, i);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidParams(`invalid argument ${i}: block number too large`);
  return Number(n);
}
