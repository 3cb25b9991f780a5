/**
 * Native operations: the `data` of a SignedTransaction sent to the zero address with amount 0, a JSON
 * object with exactly one key naming the variant (serde's externally tagged form), e.g.
 * {"Transfer":{"contract":"SRC20_…","to":"0x…","amount":5}}. Every variant is declared once in the
 * table below; decoding is strict (duplicate keys, unknown or missing fields, fractions, negative or
 * oversized integers are errors naming the field) so a payload has exactly one meaning on every node.
 */
import {
  MAX_U128,
  type NativeOperation as GenericOperation,
  NFT_COLLECTION_RE,
  NFT_OPERATIONS,
  OperationDecodeError,
  type OperationFamily,
  STAKING_OPERATIONS,
  type OperationFields,
  TOKEN_CONTRACT_RE,
  TOKEN_OPERATIONS,
  U64,
  type VariantSpec,
  address,
  badOperation as bad,
  checkMessage,
  decodeField,
  text,
  uint,
} from '../modules/index.js';
import { parseStrictJson } from './operation-json.js';

export { MAX_U128, NFT_COLLECTION_RE, OperationDecodeError, type OperationFamily, type OperationFields, TOKEN_CONTRACT_RE };

/**
 * Every native operation variant and its fields (wire format fixed by docs/operations.md): the modules'
 * rows, in the order tokens, staking, nft.
 */
export const OPERATION_VARIANTS = {
  ...TOKEN_OPERATIONS,
  ...STAKING_OPERATIONS,
  ...NFT_OPERATIONS,
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
  const wrong = checkMessage(spec, fields);
  if (wrong !== null) throw bad(name, wrong);
  return { name: name as OperationName, family: spec.family, fields };
}
