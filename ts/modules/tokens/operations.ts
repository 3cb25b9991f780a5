/**
 * The SRC-20 rows of the native operations' wire-format table (docs/operations.md; Cosmos `types/msgs.go`):
 * each variant's fields with their bounds, and Deploy's stateless check. ts/ledger/operations.ts decodes
 * every variant with these rows; the handlers read the typed messages derived from them.
 */
import { type MessageOf, type OperationTable, MAX_U128, address, checked, text, token, uint } from '../kit/spec.js';

export const TOKEN_OPERATIONS = {
  Deploy: checked(
    {
      family: 'token',
      fields: { name: text(64), symbol: text(16), decimals: uint(18n), supply: uint(MAX_U128), max_supply: uint(MAX_U128) },
    } as const,
    (m) => (m.max_supply !== 0n && m.max_supply < m.supply ? 'max_supply must be 0 (uncapped) or at least supply' : null),
  ),
  Transfer: { family: 'token', fields: { contract: token, to: address, amount: uint(MAX_U128, 1n) } },
  Burn: { family: 'token', fields: { contract: token, amount: uint(MAX_U128, 1n) } },
  Mint: { family: 'token', fields: { contract: token, to: address, amount: uint(MAX_U128, 1n) } },
  Approve: { family: 'token', fields: { contract: token, spender: address, amount: uint(MAX_U128) } },
  TransferFrom: { family: 'token', fields: { contract: token, from: address, to: address, amount: uint(MAX_U128, 1n) } },
} as const satisfies OperationTable;

export type TokenOperation = keyof typeof TOKEN_OPERATIONS;
export type TokenMessage<K extends TokenOperation> = MessageOf<(typeof TOKEN_OPERATIONS)[K]>;
