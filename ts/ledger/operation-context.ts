/**
 * The contract between the native transaction executor and the operation families (SRC-20 tokens,
 * DPoS staking, SRC-721 NFTs). The executor charges the fee and bumps the nonce; a family's handler
 * applies the operation's effects to the state (a sub-transaction of the block overlay) and records events. A handler that throws
 * OperationFailed leaves no effect: the transaction is still included (fee paid, nonce used) with
 * status 0 and the reason in its receipt, as a reverted EVM transaction would be.
 */
import type { StateOverlay } from '../state/index.js';
import type { NativeEvent } from './events.js';
import type { NativeOperation, OperationFamily } from './operations.js';
import type { SignedTransaction } from './transaction.js';

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

/** The operation cannot apply in this state (not the deployer, insufficient token balance, ...). */
export class OperationFailed extends Error {
  readonly code = 'OPERATION_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'OperationFailed';
  }
}

/** One operation being applied: its state (the block overlay inside a sub-transaction, rolled back on failure), transaction, block and event sink. */
export interface OperationCall {
  state: StateOverlay;
  tx: SignedTransaction;
  op: NativeOperation;
  env: OperationEnv;
  emit(event: NativeEvent): void;
}

/** Applies one family's operations; throws OperationFailed to fail the transaction without effects. */
export type OperationHandler = (call: OperationCall) => void;

/** The index terms an event is listed under (e.g. `token:SRC20_…`, `nft:addr:0x…`); [] when none. */
export type EventIndexTerms = (event: NativeEvent) => string[];

/** What each operation family provides to the executor and the block store. */
export interface OperationModule {
  family: OperationFamily;
  apply: OperationHandler;
  indexTerms: EventIndexTerms;
  /** Work at the end of every block (epochs, reward distribution, unbonding), after its transactions; absent when none. */
  endBlock?: (state: StateOverlay, env: OperationEnv) => void;
  /**
   * Verified double-sign evidence against `validator` for an infraction at `infractionHeight`, included in
   * the block `env` describes (the consensus layer checks the evidence; staking slashes and tombstones).
   */
  onDoubleSign?: (state: StateOverlay, validator: string, infractionHeight: number, env: OperationEnv) => void;
}
