/**
 * The transactions of a block before the traced one, re-applied as the block applied them (docs/evm.md,
 * Tracing: "The state before a transaction"). Native transactions run through the ledger's rules, EVM ones
 * through the VM; the end-of-block work (fee split, coinbase, epochs, reward distribution) is left out, it
 * happens after the block's last transaction.
 *
 * In a trace worker the state is read by message. The VM awaits every read (the adapter fetches first);
 * native operations read synchronously, so a native transaction runs through the base's `runSync`: a run
 * that reads keys not fetched yet is dropped, those keys are fetched in one round trip, and it runs again.
 */
import { type RunTxResult, runTx } from '@ethereumjs/vm';
import { applyNativeTransaction } from '../../ledger/executor.js';
import type { OperationEnv } from '../../ledger/operation-context.js';
import type { SignedTransaction } from '../../ledger/transaction.js';
import { accountKey } from '../../state/accounts.js';
import { StateOverlay } from '../../state/state-store.js';
import { ServerError } from '../../util/errors.js';
import { type BlockEnv, operationEnv } from '../block-executor.js';
import { FEE_COLLECTOR } from '../common.js';
import { CallTimeoutError } from '../deadline.js';
import { isEvmTransaction, typedTransactionOf } from '../evm-tx.js';
import { RemoteStateError } from '../remote-state.js';
import type { EvmBaseState } from '../state-adapter.js';
import { type PooledVm, acquireVm, releaseVm } from '../vm-pool.js';
import { TraceTimeoutError } from './types.js';

const collectorKey = accountKey(FEE_COLLECTOR);

/** Runs `fn`, which reads the state synchronously, over `base` (fetching what it missed first, in a worker). */
export function runSync<T>(base: EvmBaseState, fn: () => T): Promise<T> {
  return base.runSync ? base.runSync(fn) : Promise.resolve().then(fn);
}

/** A committed transaction that no longer applies the same way: the node's state or rules are broken. */
const diverged = (env: BlockEnv, reason: string): ServerError =>
  new ServerError(`re-execution of block ${env.height} diverged: ${reason}`);

/** Errors that end a trace as they are (its time is up, its task ended): not a divergence of the block. */
export function isTraceAbort(err: unknown): boolean {
  return err instanceof TraceTimeoutError || err instanceof CallTimeoutError || err instanceof RemoteStateError;
}

async function applyNative(state: StateOverlay, base: EvmBaseState, tx: SignedTransaction, env: BlockEnv, opEnv: OperationEnv) {
  // On a child overlay: a run dropped for a missing read leaves nothing behind.
  const { child, outcome } = await runSync(base, () => {
    const child = new StateOverlay(state);
    return { child, outcome: applyNativeTransaction(child, tx, opEnv) };
  });
  if ('dropped' in outcome) throw diverged(env, outcome.dropped);
  state.absorb(child);
}

async function applyEvm(c: PooledVm, state: StateOverlay, tx: SignedTransaction, env: BlockEnv, blockGasUsed: bigint) {
  if (env.height < env.evmActivationHeight) throw diverged(env, 'EVM not active yet');
  let r: RunTxResult;
  try {
    r = await runTx(c.vm, { tx: typedTransactionOf(tx, c.common), block: c.block, skipHardForkValidation: true, blockGasUsed });
  } catch (err) {
    if (isTraceAbort(err)) throw err;
    throw diverged(env, (err as Error).message.split(' (')[0]);
  }
  // As the block executor: the VM's fee payment to the collector is replaced by the block's fee split.
  state.delete(collectorKey);
  return r.totalGasSpent;
}

/**
 * Apply committed transactions on `state` (over `base`) as their block did, stopping with TraceTimeoutError
 * past `deadline`. Returns the EVM gas they used (the traced transaction's `blockGasUsed`).
 */
export async function applyPrefix(
  env: BlockEnv,
  state: StateOverlay,
  base: EvmBaseState,
  txs: readonly SignedTransaction[],
  deadline = Number.POSITIVE_INFINITY,
): Promise<bigint> {
  let gasUsed = 0n;
  let vm: PooledVm | null = null;
  const opEnv = operationEnv(env);
  try {
    for (const tx of txs) {
      if (Date.now() > deadline) throw new TraceTimeoutError();
      if (!isEvmTransaction(tx)) {
        await applyNative(state, base, tx, env, opEnv);
        continue;
      }
      if (!vm) {
        vm = await acquireVm(env, state, base);
        // An untraced run has no step events: the interpreter's own deadline check stops a long one.
        vm.guard.deadline = deadline;
      }
      gasUsed += await applyEvm(vm, state, tx, env, gasUsed);
    }
  } catch (err) {
    if (err instanceof CallTimeoutError) throw new TraceTimeoutError();
    throw err;
  } finally {
    if (vm) releaseVm(vm);
  }
  return gasUsed;
}
