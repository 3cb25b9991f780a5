/**
 * The staking module's rows of the wire-format table (docs/operations.md; Cosmos x/staking, x/distribution
 * and x/slashing types/msgs.go): each variant's fields, types and bounds. ts/ledger/operations.ts decodes
 * with these rows; MessageOf gives each handler its message type. No row has a stateless check beyond its
 * field bounds: every other rule (from_validator ≠ to_validator included) fails at inclusion with a
 * status-0 receipt, as it always has, so it stays in the handler.
 */
import { type MessageOf, type OperationTable, U64, address, addressOrNull, text, uint } from '../kit/spec.js';

export const STAKING_OPERATIONS = {
  // DPoS staking (coin amounts in base units)
  RegisterValidator: { family: 'staking', fields: { name: text(64), stake: uint(U64, 1n), commission_bps: uint(10_000n) } },
  Delegate: { family: 'staking', fields: { validator: address, amount: uint(U64, 1n) } },
  Undelegate: { family: 'staking', fields: { validator: address, amount: uint(U64, 1n) } },
  Redelegate: { family: 'staking', fields: { from_validator: address, to_validator: address, amount: uint(U64, 1n) } },
  ClaimRewards: { family: 'staking', fields: { validator: addressOrNull } },
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
} as const satisfies OperationTable;

export type StakingOperations = typeof STAKING_OPERATIONS;
export type StakingOperationName = keyof StakingOperations;
/** The message of a staking operation, e.g. StakingMessage<'Delegate'> = { validator: string; amount: bigint }. */
export type StakingMessage<K extends StakingOperationName> = MessageOf<StakingOperations[K]>;
