/**
 * The one way a VM of this chain is made, for block execution (block-executor.ts) and for calls and traces
 * (vm-pool.ts) alike: the chain's Common, the node state behind an EvmStateAdapter, a BLOCKHASH source, and
 * the header fields every run of a block sees. Each caller keeps its own idle VMs (blocks never share a VM
 * with calls or traces), so only the making lives here.
 */
import { createBlock } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { createAddressFromString } from '@ethereumjs/util';
import type { EVM } from '@ethereumjs/evm';
import { type VM, createVM } from '@ethereumjs/vm';
import type { StateOverlay } from '../state/index.js';
import { BASE_FEE_PER_GAS, type BlockEnv, blockGasLimit } from './block-env.js';
import { cacheCodeAnalysis } from './code-analysis.js';
import { FEE_COLLECTOR, PARAMS_LOADED, chainCommon } from './common.js';
import { type EvmBaseState, EvmStateAdapter } from './state-adapter.js';

export type EvmBlock = ReturnType<typeof createBlock>;

/** The header fields every EVM run of a block sees (coinbase, gas limit, base fee): one rule for blocks, calls and traces. */
export function evmBlockFor(env: BlockEnv, common: Common): EvmBlock {
  const o = env.header;
  const block = createBlock(
    {
      header: {
        number: BigInt(env.height),
        timestamp: BigInt(env.timestamp),
        coinbase: createAddressFromString(o?.coinbase ?? FEE_COLLECTOR),
        gasLimit: o?.gasLimit ?? blockGasLimit(env),
        baseFeePerGas: o?.baseFee ?? BASE_FEE_PER_GAS,
        ...(o?.prevRandao ? { mixHash: o.prevRandao } : {}),
      },
    },
    // A blob base fee override replaces the header's computed one (below): the header stays unfrozen then.
    { common, params: PARAMS_LOADED, skipConsensusFormatValidation: true, freeze: o?.blobBaseFee === undefined },
  );
  const blobBaseFee = o?.blobBaseFee;
  if (blobBaseFee !== undefined) block.header.getBlobGasPrice = () => blobBaseFee;
  return block;
}

/** VMs are kept per chain, hardfork and size-limit choice: one made for one never runs another. */
export const vmKey = (env: Pick<BlockEnv, 'chainId' | 'hardfork' | 'unlimitedContractSize'>): string =>
  `${env.chainId}:${env.hardfork}${env.unlimitedContractSize ? ':unlimited' : ''}`;

/** The EVM's options for a block environment: its BLOCKHASH source and, on a dev chain that asks, no size limits. */
export function evmOptions(env: Pick<BlockEnv, 'unlimitedContractSize'>, blockchain: unknown): never {
  const unlimited = env.unlimitedContractSize === true;
  return { blockchain, allowUnlimitedContractSize: unlimited, allowUnlimitedInitCodeSize: unlimited } as never;
}

/** A fresh VM with the state adapter it reads and writes through. */
export interface ChainVm {
  vm: VM;
  common: Common;
  adapter: EvmStateAdapter;
}

/**
 * A new VM for `env`'s chain and hardfork over `overlay` (whose base is `base`). `blockHash` answers BLOCKHASH
 * for the run the VM serves at the time (pooled VMs serve many runs, so it is read on every call).
 */
export async function createChainVm(
  env: Pick<BlockEnv, 'chainId' | 'hardfork' | 'unlimitedContractSize'>,
  overlay: StateOverlay,
  base: EvmBaseState,
  blockHash: (height: number) => Promise<Uint8Array | null>,
): Promise<ChainVm> {
  const common = chainCommon(env.chainId, env.hardfork);
  const adapter = new EvmStateAdapter(overlay, base);
  const blockchain = {
    getBlock: async (n: number) => {
      const h = await blockHash(Number(n));
      return { hash: () => h ?? new Uint8Array(32) };
    },
    putBlock: async () => undefined,
    shallowCopy() {
      return this;
    },
  };
  const vm = await createVM({ common, stateManager: adapter, evmOpts: evmOptions(env, blockchain) });
  cacheCodeAnalysis(vm.evm as EVM);
  return { vm, common, adapter };
}

/**
 * A kept VM ready for its next run over `overlay` (whose base is `base`): what a finished run leaves in the EVM
 * (warm sets, touched accounts, transient storage) is cleared. Both keepers of idle VMs (block-executor.ts,
 * vm-pool.ts) reuse them through this.
 */
export function reuseChainVm(c: Pick<ChainVm, 'vm' | 'adapter'>, overlay: StateOverlay, base: EvmBaseState): void {
  c.adapter.rebase(overlay, base);
  c.vm.evm.journal.cleanJournal();
  (c.vm.evm as EVM).transientStorage.clear();
}
