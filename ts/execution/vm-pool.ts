/**
 * VMs kept between runs for calls and traces: creating one costs about a millisecond (opcode tables,
 * precompiles, the Common's parameter merges), more than a short call or trace itself. Block execution
 * does not use this pool: blocks keep VMs of their own (block-executor.ts), so nothing a call or trace leaves
 * behind (listeners, deadline guards) can ever reach consensus.
 */
import type { Common } from '@ethereumjs/common';
import type { VM } from '@ethereumjs/vm';
import type { StateOverlay } from '../state/index.js';
import { type BlockEnv, blockGasLimit } from './block-env.js';
import { type DeadlineGuard, installDeadline } from './deadline.js';
import { restorePrecompiles } from './overrides.js';
import type { EvmBaseState, EvmStateAdapter } from './state-adapter.js';
import { type EvmBlock, createChainVm, evmBlockFor, reuseChainVm, vmKey } from './vm-factory.js';

/** A pooled VM with its state adapter, deadline guard and the block environment of its current run. */
export interface PooledVm {
  key: string;
  vm: VM;
  common: Common;
  adapter: EvmStateAdapter;
  guard: DeadlineGuard;
  /** The environment of the run it serves now (BLOCKHASH reads it). */
  env: BlockEnv;
  block: EvmBlock;
  /** Its block carries header overrides (BlockEnv.header): the next run builds its own. */
  overridden?: boolean;
}

/** Idle VMs of this thread by chain; a run takes one and gives it back (in-process runs may interleave). */
const idleVms = new Map<string, PooledVm[]>();
const MAX_IDLE_VMS = 4;
/** Events tracers listen to; a VM goes back to the pool without listeners. */
const TRACE_EVENTS = ['step', 'beforeMessage', 'afterMessage', 'newContract'] as const;

/**
 * A VM for a run in the environment of the block at env.height, reading and writing `overlay` (whose
 * base is `base`). Release it with releaseVm when the run ends.
 */
export async function acquireVm(env: BlockEnv, overlay: StateOverlay, base: EvmBaseState): Promise<PooledVm> {
  const key = vmKey(env);
  let c = idleVms.get(key)?.pop();
  if (!c) {
    const holder: { c?: PooledVm } = {};
    const { vm, common, adapter } = await createChainVm(env, overlay, base, (n) => (holder.c as PooledVm).env.blockHash(n));
    c = { key, vm, common, adapter, guard: installDeadline(vm), env, block: evmBlockFor(env, common) };
    holder.c = c;
  }
  c.env = env;
  reuseChainVm(c, overlay, base);
  const h = c.block.header;
  // A run with header overrides gets its own block, and the next run after it a fresh one.
  if (
    h.number !== BigInt(env.height) ||
    h.timestamp !== BigInt(env.timestamp) ||
    h.gasLimit !== blockGasLimit(env) ||
    env.header ||
    c.overridden
  ) {
    c.block = evmBlockFor(env, c.common);
  }
  c.overridden = env.header !== undefined;
  return c;
}

export function releaseVm(c: PooledVm): void {
  c.guard.deadline = Number.POSITIVE_INFINITY;
  restorePrecompiles(c.vm);
  const events = c.vm.evm.events;
  for (const e of TRACE_EVENTS) events?.removeAllListeners(e);
  let list = idleVms.get(c.key);
  if (!list) idleVms.set(c.key, (list = []));
  if (list.length < MAX_IDLE_VMS) list.push(c);
}
