/**
 * VMs kept between runs for calls and traces: creating one costs about a millisecond (opcode tables,
 * precompiles, the Common's parameter merges), more than a short call or trace itself. Block execution
 * does not use this pool: blocks keep VMs of their own (block-executor.ts), so nothing a call or trace leaves
 * behind (listeners, deadline guards) can ever reach consensus.
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { EVM } from '@ethereumjs/evm';
import { createAddressFromString } from '@ethereumjs/util';
import { type VM, createVM } from '@ethereumjs/vm';
import type { StateOverlay } from '../state/state-store.js';
import { BASE_FEE_PER_GAS, type BlockEnv, blockGasLimit, evmOptions, vmKey } from './block-executor.js';
import { FEE_COLLECTOR, PARAMS_LOADED, chainCommon } from './common.js';
import { type DeadlineGuard, installDeadline } from './deadline.js';
import { type EvmBaseState, EvmStateAdapter } from './state-adapter.js';

export type EvmBlock = ReturnType<typeof createBlock>;

/** The header fields every EVM run of a block sees (coinbase, gas limit, base fee): one rule for blocks, calls and traces. */
export function evmBlockFor(env: BlockEnv, common: Common): EvmBlock {
  return createBlock(
    {
      header: {
        number: BigInt(env.height),
        timestamp: BigInt(env.timestamp),
        coinbase: createAddressFromString(FEE_COLLECTOR),
        gasLimit: blockGasLimit(env),
        baseFeePerGas: BASE_FEE_PER_GAS,
      },
    },
    { common, params: PARAMS_LOADED, skipConsensusFormatValidation: true },
  );
}

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
    const common = chainCommon(env.chainId, env.hardfork);
    const adapter = new EvmStateAdapter(overlay, base);
    const holder: { c?: PooledVm } = {};
    const blockchain = {
      getBlock: async (n: number) => {
        const h = await (holder.c as PooledVm).env.blockHash(Number(n));
        return { hash: () => h ?? new Uint8Array(32) };
      },
      putBlock: async () => undefined,
      shallowCopy() {
        return this;
      },
    };
    const vm = await createVM({ common, stateManager: adapter, evmOpts: evmOptions(env, blockchain) });
    c = { key, vm, common, adapter, guard: installDeadline(vm), env, block: evmBlockFor(env, common) };
    holder.c = c;
  }
  c.env = env;
  c.adapter.rebase(overlay, base);
  // What a finished run leaves in the EVM: warm sets, touched accounts, transient storage.
  c.vm.evm.journal.cleanJournal();
  (c.vm.evm as EVM).transientStorage.clear();
  const h = c.block.header;
  if (h.number !== BigInt(env.height) || h.timestamp !== BigInt(env.timestamp) || h.gasLimit !== blockGasLimit(env))
    c.block = evmBlockFor(env, c.common);
  return c;
}

export function releaseVm(c: PooledVm): void {
  c.guard.deadline = Number.POSITIVE_INFINITY;
  const events = c.vm.evm.events;
  for (const e of TRACE_EVENTS) events?.removeAllListeners(e);
  let list = idleVms.get(c.key);
  if (!list) idleVms.set(c.key, (list = []));
  if (list.length < MAX_IDLE_VMS) list.push(c);
}
