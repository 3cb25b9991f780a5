/**
 * Native operations: the `data` of a SignedTransaction sent to the zero address with amount 0, a JSON
 * object with exactly one key naming the variant (serde's externally tagged form), e.g.
 * {"Transfer":{"contract":"SRC20_…","to":"0x…","amount":5}}. Every variant is declared once in the
 * table below; decoding is strict (duplicate keys, unknown or missing fields, fractions, negative or
 * oversized integers are errors naming the field) so a payload has exactly one meaning on every node.
 */
import {
  type FieldSpec,
  MAX_U128,
  type NativeOperation as GenericOperation,
  NFT_COLLECTION_RE,
  OperationDecodeError,
  type OperationFamily,
  STAKING_OPERATIONS,
  type OperationFields,
  TOKEN_CONTRACT_RE,
  U64,
  type VariantSpec,
  address,
  addressOrEmpty,
  badOperation as bad,
  bool,
  collection,
  decodeField,
  text,
  token,
  uint,
} from '../modules/index.js';
import { parseStrictJson } from './operation-json.js';

export { MAX_U128, NFT_COLLECTION_RE, OperationDecodeError, type OperationFamily, type OperationFields, TOKEN_CONTRACT_RE };

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
  // DPoS staking, PoA authority set (modules/staking/operations.ts)
  ...STAKING_OPERATIONS,
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
    fields: { collection, token_id: uint(U64, 1n), spender: addressOrEmpty, expiry_height: uint(U64) },
  },
  ApproveNftOperator: { family: 'nft', fields: { collection, operator: address, approved: bool } },
  FreezeNftCollection: { family: 'nft', fields: { collection } },
  UpdateNftBaseUri: { family: 'nft', fields: { collection, base_uri: text(512, 0) } },
} as const satisfies Record<string, VariantSpec>;

export type OperationName = keyof typeof OPERATION_VARIANTS;
/** A decoded native operation: the variant, its family and its fields in canonical form. */
export type NativeOperation = GenericOperation<OperationName>;

const fail = (msg: string): OperationDecodeError => new OperationDecodeError(`Invalid transaction: ${msg}`);

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
