/**
 * The contract between the native transaction executor (ts/ledger/executor.ts) and the native modules
 * (tokens, staking, nft, …). The executor charges the fee and bumps the nonce; a module's handler applies
 * the operation's effects to the state (a sub-transaction of the block overlay) and records events. A
 * handler that throws OperationFailed (or one of a module's error classes, which extend it) leaves no
 * effect: the transaction is still included (fee paid, nonce used) with status 0 and the reason in its
 * receipt, as a reverted EVM transaction would be.
 */
import type { StateOverlay } from '../../state/index.js';
import type { NativeEvent } from './events.js';
import type { OperationFamily } from './spec.js';

/** Heights at which ledger behaviour changes (a genesis setting; mirrors chain/params ActivationHeights). */
export interface LedgerActivation {
  dposBft: number;
  evm: number;
  rewardV2: number;
  tokenomicsV2: number;
  nft: number;
}

/** What the ledger needs to know of the chain's parameters (plain data: it crosses to worker threads). */
export interface LedgerParams {
  activation: LedgerActivation;
  /** Blocks per epoch. */
  epochLength: number;
  /** The genesis admin (may add PoA authorities before DPoS); null when genesis names none. */
  admin: string | null;
  /** The genesis authority set (address, name, public key). */
  authorities: readonly { address: string; name: string; public_key: string }[];
}

/** The block an operation executes in. */
export interface OperationEnv {
  height: number;
  timestamp: number;
  proposer: string;
  chainId: number;
  ledger: LedgerParams;
  /**
   * The validators whose precommits for the parent block this block records (its last commit), when the
   * consensus layer supplies them (DPoS+BFT); absent: the proposer is the block's only signer.
   */
  lastCommit?: readonly string[];
}

/**
 * The operation cannot apply in this state (not the deployer, insufficient token balance, ...). `code` is
 * stable (`<module>/<failure>`, e.g. `tokens/insufficient_balance`): clients and tests match on it, the
 * message is for people. Modules declare one subclass per failure; transports map them by this base class.
 */
export class OperationFailed extends Error {
  constructor(
    message: string,
    readonly code: string = 'OPERATION_FAILED',
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** What a handler reads of the transaction it applies (ts/ledger's SignedTransaction has these fields). */
export interface OperationTx {
  readonly from_address: string;
  readonly to_address: string;
  readonly amount: bigint;
  readonly fee: bigint;
  readonly nonce: bigint;
  readonly public_key: string;
}

/** A decoded native operation: the variant, its family and its fields in canonical form. */
export interface NativeOperation<Name extends string = string, Fields = OperationFields> {
  name: Name;
  family: OperationFamily;
  fields: Fields;
}

/** Decoded fields, untyped (the executor's view); handlers see their message type (spec.ts MessageOf). */
export type OperationFields = Record<string, bigint | string | boolean | null>;

/** One operation being applied: its state (the block overlay inside a sub-transaction, rolled back on failure), transaction, block and event sink. */
export interface OperationCall<Fields = OperationFields> {
  state: StateOverlay;
  tx: OperationTx;
  op: NativeOperation<string, Fields>;
  env: OperationEnv;
  emit(event: NativeEvent): void;
}
