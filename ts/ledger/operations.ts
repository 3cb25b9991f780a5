/**
 * Native operations: the `data` of a SignedTransaction sent to the zero address with amount 0, a JSON
 * object with exactly one key naming the variant (serde's externally tagged form), e.g.
 * {"Transfer":{"contract":"SRC20_…","to":"0x…","amount":5}}. Every variant is declared once in the
 * table below; decoding is strict (duplicate keys, unknown or missing fields, fractions, negative or
 * oversized integers are errors naming the field) so a payload has exactly one meaning on every node.
 */
import { InvalidTransactionError, isAddress } from '../util/index.js';
import { parseStrictJson } from './operation-json.js';

export type OperationFamily = 'token' | 'staking' | 'nft';

/** Token amounts are u128; coin amounts (staking) are u64 base units; ids and heights are u64. */
export const MAX_U128 = (1n << 128n) - 1n;
const U64 = (1n << 64n) - 1n;

type FieldSpec =
  | { t: 'uint'; max: bigint; min?: bigint }
  | { t: 'text'; max: number; min?: number; pattern?: RegExp; what?: string }
  | { t: 'address' }
  | { t: 'address_or_empty' }
  | { t: 'address_or_null' }
  | { t: 'token' }
  | { t: 'collection' }
  | { t: 'bool' };

interface VariantSpec {
  family: OperationFamily;
  fields: Record<string, FieldSpec>;
  optional?: readonly string[];
}

const uint = (max: bigint, min = 0n): FieldSpec => ({ t: 'uint', max, min });
const text = (max: number, min = 1, pattern?: RegExp, what?: string): FieldSpec => ({ t: 'text', max, min, pattern, what });
const address: FieldSpec = { t: 'address' };
const token: FieldSpec = { t: 'token' };
const collection: FieldSpec = { t: 'collection' };

export const TOKEN_CONTRACT_RE = /^SRC20_[0-9a-fA-F]{40}$/;
export const NFT_COLLECTION_RE = /^SRC721_[0-9a-fA-F]{40}$/;

/** Every native operation variant and its fields (wire format fixed by docs/operations.md). */
export const OPERATION_VARIANTS = {
  // SRC-20 tokens
  Deploy: {
    family: 'token',
    fields: { name: text(64), symbol: text(16), decimals: uint(18n), supply: uint(MAX_U128), max_supply: uint(MAX_U128) },
  },
  Transfer: { family: 'token', fields: { contract: token, to: address, amount: uint(MAX_U128, 1n) } },
  Burn: { family: 'token', fields: { contract: token, amount: uint(MAX_U128, 1n) } },
  Mint: { family: 'token', fields: { contract: token, to: address, amount: uint(MAX_U128, 1n) } },
  Approve: { family: 'token', fields: { contract: token, spender: address, amount: uint(MAX_U128) } },
  TransferFrom: { family: 'token', fields: { contract: token, from: address, to: address, amount: uint(MAX_U128, 1n) } },
  // DPoS staking (coin amounts in base units)
  RegisterValidator: { family: 'staking', fields: { name: text(64), stake: uint(U64, 1n), commission_bps: uint(10_000n) } },
  Delegate: { family: 'staking', fields: { validator: address, amount: uint(U64, 1n) } },
  Undelegate: { family: 'staking', fields: { validator: address, amount: uint(U64, 1n) } },
  Redelegate: { family: 'staking', fields: { from_validator: address, to_validator: address, amount: uint(U64, 1n) } },
  ClaimRewards: { family: 'staking', fields: { validator: { t: 'address_or_null' } } },
  UpdateCommission: { family: 'staking', fields: { commission_bps: uint(10_000n) } },
  Unjail: { family: 'staking', fields: {} },
  // PoA authority set (genesis admin only, before DPoS activation; POST /validators)
  AddAuthority: {
    family: 'staking',
    fields: {
      address,
      public_key: text(130, 130, /^04[0-9a-f]{128}$/, '04 + 128 lowercase hex (uncompressed secp256k1)'),
      name: text(64),
    },
  },
  // SRC-721 NFTs
  DeployNft: {
    family: 'nft',
    fields: {
      name: text(64),
      symbol: text(10, 1, /^[A-Za-z0-9]+$/, 'ASCII letters and digits'),
      max_supply: uint(U64),
      royalty_bps: uint(1000n),
      royalty_recipient: address,
      base_uri: text(512, 0),
    },
  },
  MintNft: {
    family: 'nft',
    fields: { collection, to: address, token_id: uint(U64, 1n), token_uri_override: text(512, 0) },
    optional: ['token_id', 'token_uri_override'],
  },
  TransferNft: { family: 'nft', fields: { collection, token_id: uint(U64, 1n), to: address } },
  BurnNft: { family: 'nft', fields: { collection, token_id: uint(U64, 1n) } },
  ApproveNft: {
    family: 'nft',
    fields: { collection, token_id: uint(U64, 1n), spender: { t: 'address_or_empty' }, expiry_height: uint(U64) },
  },
  ApproveNftOperator: { family: 'nft', fields: { collection, operator: address, approved: { t: 'bool' } } },
  FreezeNftCollection: { family: 'nft', fields: { collection } },
  UpdateNftBaseUri: { family: 'nft', fields: { collection, base_uri: text(512, 0) } },
} as const satisfies Record<string, VariantSpec>;

export type OperationName = keyof typeof OPERATION_VARIANTS;
export type OperationFields = Record<string, bigint | string | boolean | null>;

/** A decoded native operation: the variant, its family and its fields in canonical form. */
export interface NativeOperation {
  name: OperationName;
  family: OperationFamily;
  fields: OperationFields;
}

/** tx.data of a native operation is malformed; the message names the field. */
export class OperationDecodeError extends InvalidTransactionError {}

const fail = (msg: string): OperationDecodeError => new OperationDecodeError(`Invalid transaction: ${msg}`);
const bad = (variant: string, msg: string): OperationDecodeError =>
  new OperationDecodeError(`invalid ${variant} operation: ${msg}`);

function decodeField(variant: string, name: string, spec: FieldSpec, v: unknown): bigint | string | boolean | null {
  const where = name;
  const fail = (msg: string): OperationDecodeError => bad(variant, msg);
  switch (spec.t) {
    case 'uint': {
      let n: bigint | undefined;
      if (typeof v === 'bigint') n = v;
      else if (typeof v === 'string' && /^(0|[1-9][0-9]*)$/.test(v)) n = BigInt(v);
      const min = spec.min ?? 0n;
      if (n === undefined || n < min || n > spec.max) throw fail(`${where} must be an integer from ${min} to ${spec.max}`);
      return n;
    }
    case 'text': {
      const min = spec.min ?? 1;
      if (typeof v !== 'string' || v.length < min || v.length > spec.max || (min > 0 && v.trim().length === 0))
        throw fail(`${where} must be a ${min > 0 ? 'non-empty ' : ''}string of at most ${spec.max} characters`);
      if (spec.pattern && !spec.pattern.test(v)) throw fail(`${where} must contain only ${spec.what}`);
      return v;
    }
    case 'address':
      if (!isAddress(v)) throw fail(`${where} must be 0x + 40 hex characters`);
      return v.toLowerCase();
    case 'address_or_empty':
      if (v === '') return '';
      if (!isAddress(v)) throw fail(`${where} must be 0x + 40 hex characters, or "" to revoke`);
      return v.toLowerCase();
    case 'address_or_null':
      if (v === null) return null;
      if (!isAddress(v)) throw fail(`${where} must be 0x + 40 hex characters, or null for all`);
      return v.toLowerCase();
    case 'token':
      if (typeof v !== 'string' || !TOKEN_CONTRACT_RE.test(v)) throw fail(`${where} must be SRC20_ + 40 hex characters`);
      return `SRC20_${v.slice(6).toLowerCase()}`;
    case 'collection':
      if (typeof v !== 'string' || !NFT_COLLECTION_RE.test(v)) throw fail(`${where} must be SRC721_ + 40 hex characters`);
      return `SRC721_${v.slice(7).toLowerCase()}`;
    case 'bool':
      if (typeof v !== 'boolean') throw fail(`${where} must be true or false`);
      return v;
  }
}

/** Decode tx.data as a native operation. Throws OperationDecodeError naming what is wrong. */
export function decodeOperation(data: string): NativeOperation {
  let v: unknown;
  try {
    v = parseStrictJson(data);
  } catch (err) {
    throw fail(`data is not valid JSON (${(err as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('data must be a JSON object naming one operation');
  const keys = Object.keys(v);
  if (keys.length !== 1) throw fail('data must have exactly one key naming the operation');
  const name = keys[0];
  if (!Object.hasOwn(OPERATION_VARIANTS, name)) throw fail(`unknown operation ${name}`);
  const spec: VariantSpec = OPERATION_VARIANTS[name as OperationName];
  const body = (v as Record<string, unknown>)[name];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad(name, 'payload must be an object');
  const o = body as Record<string, unknown>;
  for (const f of Object.keys(o)) if (!Object.hasOwn(spec.fields, f)) throw bad(name, `unknown field ${f}`);
  const fields: OperationFields = {};
  for (const [f, fs] of Object.entries(spec.fields)) {
    if (!Object.hasOwn(o, f)) {
      if (spec.optional?.includes(f)) continue;
      throw bad(name, `missing field ${f}`);
    }
    fields[f] = decodeField(name, f, fs, o[f]);
  }
  if (name === 'Deploy' && fields.max_supply !== 0n && (fields.max_supply as bigint) < (fields.supply as bigint)) {
    throw bad('Deploy', 'max_supply must be 0 (uncapped) or at least supply');
  }
  return { name: name as OperationName, family: spec.family, fields };
}
