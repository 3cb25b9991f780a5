/**
 * How a module declares its operations: one row per variant of the wire format (docs/operations.md), each
 * field with its type and bounds. The rows are data (the decoder in ts/ledger/operations.ts reads them, so
 * a payload has exactly one meaning on every node) and types (MessageOf derives a handler's message type
 * from its row, so a handler reads `call.op.fields.amount` as a bigint without casts).
 */
import { InvalidTransactionError, isAddress } from '../../util/index.js';

/** The family an operation is listed under (the transaction kind the APIs show: token, staking, nft). */
export type OperationFamily = 'token' | 'staking' | 'nft';

/** Token amounts are u128; coin amounts (staking) are u64 base units; ids and heights are u64. */
export const MAX_U128 = (1n << 128n) - 1n;
export const U64 = (1n << 64n) - 1n;

export const TOKEN_CONTRACT_RE = /^SRC20_[0-9a-fA-F]{40}$/;
export const NFT_COLLECTION_RE = /^SRC721_[0-9a-fA-F]{40}$/;

export type UintField = { readonly t: 'uint'; readonly max: bigint; readonly min: bigint };
export type TextField = {
  readonly t: 'text';
  readonly max: number;
  readonly min: number;
  readonly pattern?: RegExp;
  readonly what?: string;
};
export type AddressField = { readonly t: 'address' };
export type AddressOrEmptyField = { readonly t: 'address_or_empty' };
export type AddressOrNullField = { readonly t: 'address_or_null' };
export type TokenField = { readonly t: 'token' };
export type CollectionField = { readonly t: 'collection' };
export type BoolField = { readonly t: 'bool' };

export type FieldSpec =
  | UintField
  | TextField
  | AddressField
  | AddressOrEmptyField
  | AddressOrNullField
  | TokenField
  | CollectionField
  | BoolField;

/**
 * One operation variant: its family and its fields (all required unless listed in `optional`), and its
 * stateless check across fields (the Cosmos SDK's `ValidateBasic`), added with `checked`.
 */
export interface VariantSpec {
  readonly family: OperationFamily;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  readonly optional?: readonly string[];
  /** What is wrong with a decoded message whose fields are each valid, or null (a decode error naming it). */
  readonly check?: (message: never) => string | null;
}

/** A module's rows of the wire-format table: variant name -> spec. */
export type OperationTable = Readonly<Record<string, VariantSpec>>;

export const uint = (max: bigint, min = 0n): UintField => ({ t: 'uint', max, min });
export const text = (max: number, min = 1, pattern?: RegExp, what?: string): TextField => ({
  t: 'text',
  max,
  min,
  pattern,
  what,
});
export const address: AddressField = { t: 'address' };
export const addressOrEmpty: AddressOrEmptyField = { t: 'address_or_empty' };
export const addressOrNull: AddressOrNullField = { t: 'address_or_null' };
export const token: TokenField = { t: 'token' };
export const collection: CollectionField = { t: 'collection' };
export const bool: BoolField = { t: 'bool' };

/** The decoded value of a field: integers as bigint, addresses/contracts/collections/texts as canonical strings. */
export type FieldValue<F extends FieldSpec> = F extends UintField
  ? bigint
  : F extends BoolField
    ? boolean
    : F extends AddressOrNullField
      ? string | null
      : string;

type OptionalOf<V extends VariantSpec> = V extends { readonly optional: readonly (infer O)[] } ? O & string : never;

/** The typed message of a variant: what its handler reads in `call.op.fields`. */
export type MessageOf<V extends VariantSpec> = {
  -readonly [K in Exclude<keyof V['fields'], OptionalOf<V>>]: FieldValue<V['fields'][K]>;
} & { -readonly [K in OptionalOf<V> & keyof V['fields']]?: FieldValue<V['fields'][K]> };

/** A row with its stateless check, typed by the row's message. */
export const checked = <V extends VariantSpec>(
  row: V,
  check: (message: MessageOf<V>) => string | null,
): V & { readonly check: (message: MessageOf<V>) => string | null } => ({ ...row, check });

/** The stateless check's verdict on a decoded message of `spec` (null when it has none or it passes). */
export const checkMessage = (spec: VariantSpec, fields: OperationFieldsLike): string | null =>
  spec.check ? (spec.check as (m: OperationFieldsLike) => string | null)(fields) : null;

type OperationFieldsLike = Record<string, bigint | string | boolean | null>;

/** tx.data of a native operation is malformed; the message names the field. */
export class OperationDecodeError extends InvalidTransactionError {}

/** The error for a bad field of `variant`. */
export const badOperation = (variant: string, msg: string): OperationDecodeError =>
  new OperationDecodeError(`invalid ${variant} operation: ${msg}`);

/** Decode one field strictly (its canonical form), or throw naming it. */
export function decodeField(variant: string, name: string, spec: FieldSpec, v: unknown): bigint | string | boolean | null {
  const fail = (msg: string): OperationDecodeError => badOperation(variant, msg);
  switch (spec.t) {
    case 'uint': {
      let n: bigint | undefined;
      if (typeof v === 'bigint') n = v;
      else if (typeof v === 'string' && /^(0|[1-9][0-9]*)$/.test(v)) n = BigInt(v);
      if (n === undefined || n < spec.min || n > spec.max)
        throw fail(`${name} must be an integer from ${spec.min} to ${spec.max}`);
      return n;
    }
    case 'text': {
      const min = spec.min;
      if (typeof v !== 'string' || v.length < min || v.length > spec.max || (min > 0 && v.trim().length === 0))
        throw fail(`${name} must be a ${min > 0 ? 'non-empty ' : ''}string of at most ${spec.max} characters`);
      if (spec.pattern && !spec.pattern.test(v)) throw fail(`${name} must contain only ${spec.what}`);
      return v;
    }
    case 'address':
      if (!isAddress(v)) throw fail(`${name} must be 0x + 40 hex characters`);
      return v.toLowerCase();
    case 'address_or_empty':
      if (v === '') return '';
      if (!isAddress(v)) throw fail(`${name} must be 0x + 40 hex characters, or "" to revoke`);
      return v.toLowerCase();
    case 'address_or_null':
      if (v === null) return null;
      if (!isAddress(v)) throw fail(`${name} must be 0x + 40 hex characters, or null for all`);
      return v.toLowerCase();
    case 'token':
      if (typeof v !== 'string' || !TOKEN_CONTRACT_RE.test(v)) throw fail(`${name} must be SRC20_ + 40 hex characters`);
      return `SRC20_${v.slice(6).toLowerCase()}`;
    case 'collection':
      if (typeof v !== 'string' || !NFT_COLLECTION_RE.test(v)) throw fail(`${name} must be SRC721_ + 40 hex characters`);
      return `SRC721_${v.slice(7).toLowerCase()}`;
    case 'bool':
      if (typeof v !== 'boolean') throw fail(`${name} must be true or false`);
      return v;
  }
}
