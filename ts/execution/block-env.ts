/**
 * The environment a block's EVM and native transactions run in, and the block gas rules every run shares
 * (block execution, calls, traces, admission). Its own file so the executor, the VM factory and the EVM
 * transaction rules all read it without importing each other.
 */
import type { LedgerParams } from '../ledger/index.js';

export const BLOCK_GAS_LIMIT = 30_000_000n;
export const BLOCK_GAS_TARGET = 15_000_000n;
/** Flat base fee per gas (dynamic base fee is not live): 1 Gwei. */
export const BASE_FEE_PER_GAS = 1_000_000_000n;

export interface BlockEnv {
  height: number;
  timestamp: number;
  proposer: string;
  chainId: number;
  hardfork: string;
  tokenomicsV2Height: number;
  evmActivationHeight: number;
  /** Activation heights and epochs the native operation modules read (plain data: it crosses to workers). */
  ledger: LedgerParams;
  /** Signers of the parent block recorded by this block (its last commit under DPoS+BFT); absent outside BFT. */
  lastCommit?: readonly string[];
  /** Hash (32 bytes) of an earlier block, for the BLOCKHASH opcode. */
  blockHash: (height: number) => Promise<Uint8Array | null>;
  /** A dev chain: impersonated transactions (impersonation.ts) are valid. */
  devChain?: boolean;
  /** Dev chain `--allow-unlimited-contract-size`: no EIP-170 code size or EIP-3860 initcode size limit in the EVM. */
  unlimitedContractSize?: boolean;
  /** Dev chain `--gas-limit`: the block gas limit in place of BLOCK_GAS_LIMIT (blockGasLimit reads it). */
  gasLimit?: bigint;
  /**
   * Proposer's packing limit (docs/evm.md "Block time"): EVM transactions beyond it are deferred, except
   * the block's first, which may use up to BLOCK_GAS_LIMIT. Absent when validating: 30M is the rule.
   */
  pack?: PackLimit;
  /** Header fields a call or a simulated block overrides (overrides.ts); absent for real blocks. */
  header?: HeaderOverrides;
}

/**
 * What a proposer packs (docs/evm.md "Block time"). `gas` is what the slowest measured EVM code executes in
 * `ms`: packing up to it is always safe for the slot. Beyond it a transaction still goes in while the time
 * the block has spent so far plus the predicted time of its own gas limit stays within `ms`: at the measured
 * cost per gas (pack-meter.ts: recent blocks, or this block's own EVM time so far when that is slower), or,
 * before anything was measured, at the slowest rate (`ms` per `gas`). So cheap-per-gas blocks (transfers, token
 * moves) fill up to the 30M limit and slow code stops where the measured time says the budget ends. The measure is
 * of other code, so a transaction it admits must also end within PACK_OVERRUN of the budget at the slowest rate; one
 * whose gas limit is above `gas` never goes in by time: it goes first in a block. `ms` 0: the gas rule alone.
 */
export interface PackLimit {
  gas: bigint;
  ms: number;
}

/** The block gas limit of an environment: 30M, or a dev chain's `--gas-limit`. */
export const blockGasLimit = (env: Pick<BlockEnv, 'gasLimit'>): bigint => env.gasLimit ?? BLOCK_GAS_LIMIT;

/**
 * Whether an EVM transaction with `gasLimit` still fits a block that has used `gasUsed` after `elapsedMs`;
 * `msPerGas`: the measured cost of gas (absent: the slowest rate, `pack.ms` per `pack.gas`).
 */
export function fitsPack(
  pack: PackLimit | undefined,
  gasUsed: bigint,
  gasLimit: bigint,
  elapsedMs: number,
  blockLimit = BLOCK_GAS_LIMIT,
  msPerGas?: number,
): boolean {
  if (gasUsed + gasLimit > blockLimit) return false;
  // The block's first EVM transaction may use all of the validity limit, so none is ever stuck.
  if (pack === undefined || gasUsed === 0n || gasUsed + gasLimit <= pack.gas) return true;
  if (pack.ms <= 0 || gasLimit > pack.gas) return false;
  const atSlowest = (Number(gasLimit) * pack.ms) / Number(pack.gas);
  if (msPerGas === undefined) return elapsedMs + atSlowest <= pack.ms;
  // The measure is of other code: this transaction, run at the slowest rate, must still end within the overrun.
  return elapsedMs + Number(gasLimit) * msPerGas <= pack.ms && elapsedMs + atSlowest <= pack.ms * (1 + PACK_OVERRUN);
}

/**
 * How far past the packing budget (a fraction of it) a block may run if a transaction the measured cost per gas
 * admitted runs at the slowest rate instead (code unlike the measured blocks'): 200 ms of a 400 ms budget, still
 * inside a 1 s slot with the state root and the commit. Small transactions never come near it (a 35,000-gas one is
 * 2.8 ms at the slowest rate); a 4M-gas one goes in only in the first 280 ms of a block.
 */
export const PACK_OVERRUN = 0.5;

/** Header fields a call or a simulated block may override (number and time go into BlockEnv itself). */
export interface HeaderOverrides {
  coinbase?: string;
  gasLimit?: bigint;
  baseFee?: bigint;
  /** 32 bytes. */
  prevRandao?: Uint8Array;
  blobBaseFee?: bigint;
}
