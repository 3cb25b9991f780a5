/**
 * One eth_call / eth_estimateGas as a task: what the main thread sends a call worker, what comes back,
 * and the code that runs it (in a worker over a RemoteStateView, or in-process over a snapshot).
 */
import type { KeyStr } from '../state/index.js';
import type { BlockEnv } from './block-executor.js';
import {
  type AccessListOutcome,
  type CallArgs,
  type CallOutcome,
  type CallOverrides,
  type EstimateOutcome,
  createAccessList,
  estimateCallGas,
  simulateCall,
} from './call.js';
import { CallTimeoutError } from './deadline.js';
import { OverrideError } from './overrides.js';
import { type SimulateOutcome, type SimulateSpec, simulateBlocks } from './simulate.js';
import { RemoteStateView, type StateChannel } from './remote-state.js';
import type { EvmBaseState } from './state-adapter.js';

export type CallKind = 'call' | 'estimate' | 'accessList' | 'simulate';

/** The block environment without its BLOCKHASH callback (which the worker asks the main thread for). */
export type CallEnvData = Omit<BlockEnv, 'blockHash'>;

export interface CallTask {
  type: 'call';
  kind: CallKind;
  env: CallEnvData;
  args: CallArgs;
  /** estimate: the highest gas limit searched. */
  cap: bigint;
  /** estimate: the caller raises a lower answer to this, so the search may stop there (estimateCallGas). */
  floor?: bigint;
  /** State overrides (plain data: maps, bigints and bytes clone as they are). */
  overrides?: CallOverrides;
  /** simulate: the blocks of calls (eth_simulateV1). */
  simulate?: SimulateSpec;
  /** Epoch milliseconds after which the call stops with a timeout. */
  deadline: number;
  /** Values sent along to save round trips: the callee's account and code, the caller's account. */
  prefetch: [KeyStr, Uint8Array | null][];
  /** Names the call in the worker's state requests (the main thread maps it to the call's snapshot). */
  id: number;
}

export type CallReply =
  | { kind: 'call'; outcome: CallOutcome }
  | { kind: 'estimate'; outcome: EstimateOutcome }
  | { kind: 'accessList'; outcome: AccessListOutcome }
  | { kind: 'simulate'; outcome: SimulateOutcome }
  | { kind: 'timeout' }
  /** The state override set cannot be applied (geth's words). */
  | { kind: 'refused'; message: string };

/**
 * Copies the output out of the EVM's memory: the reply is structured-cloned, and cloning a view clones
 * its whole ArrayBuffer.
 */
function detach(o: CallOutcome): CallOutcome {
  return { ...o, returnValue: o.returnValue.slice() };
}

/** Runs a call or an estimate over `view`; a timeout becomes a reply, other errors propagate. */
export async function runCall(
  kind: CallKind,
  env: BlockEnv,
  view: EvmBaseState,
  args: CallArgs,
  cap: bigint,
  deadline: number,
  floor = 0n,
  overrides: CallOverrides = {},
  simulate?: SimulateSpec,
): Promise<CallReply> {
  try {
    if (kind === 'simulate') {
      if (!simulate) throw new Error('simulate task without its blocks');
      return { kind, outcome: await simulateBlocks(env, view, simulate, deadline) };
    }
    if (kind === 'call') return { kind, outcome: detach(await simulateCall(env, view, args, deadline, overrides)) };
    if (kind === 'accessList') {
      const outcome = await createAccessList(env, view, args, deadline, overrides);
      return { kind, outcome: outcome.failure ? { ...outcome, failure: detach(outcome.failure) } : outcome };
    }
    const outcome = await estimateCallGas(env, view, args, cap, deadline, floor, overrides);
    return { kind, outcome: outcome.ok ? outcome : { ...outcome, failure: detach(outcome.failure) } };
  } catch (err) {
    if (err instanceof CallTimeoutError) return { kind: 'timeout' };
    if (err instanceof OverrideError) return { kind: 'refused', message: err.message };
    throw err;
  }
}

/** The worker side of a task (evm-worker.ts), reading state over the worker's channel. */
export async function runCallTask(task: CallTask, channel: StateChannel): Promise<CallReply> {
  // A worker that was still starting (or being replaced) may get a call whose time is already up.
  if (Date.now() > task.deadline) return { kind: 'timeout' };
  const view = new RemoteStateView(channel, task.id, task.prefetch, task.deadline);
  try {
    const env: BlockEnv = { ...task.env, blockHash: (h) => view.blockHash(h) };
    return await runCall(task.kind, env, view, task.args, task.cap, task.deadline, task.floor, task.overrides, task.simulate);
  } finally {
    view.close();
  }
}
