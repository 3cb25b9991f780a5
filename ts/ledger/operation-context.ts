/**
 * The contract between the native transaction executor and the operation families (SRC-20 tokens,
 * DPoS staking, SRC-721 NFTs). The executor charges the fee and bumps the nonce; a family's handler
 * applies the operation's effects to the state (a sub-transaction of the block overlay) and records events. A handler that throws
 * OperationFailed leaves no effect: the transaction is still included (fee paid, nonce used) with
 * status 0 and the reason in its receipt, as a reverted EVM transaction would be.
 */
import type { NativeEvent, OperationCall, OperationEnv, OperationFamily } from '../modules/index.js';
import type { StateOverlay } from '../state/index.js';

export {
  type LedgerActivation,
  type LedgerParams,
  type OperationEnv,
  OperationFailed,
  type OperationCall,
} from '../modules/index.js';

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
