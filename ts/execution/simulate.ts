/**
 * eth_simulateV1 (geth's internal/ethapi/simulate.go): blocks of calls run in order on one throwaway state
 * over the base block's, each block with its own header overrides and state overrides applied before its
 * calls; the state each call leaves is the next call's. Runs where calls run (a call worker, or in-process).
 */
import type { EVM } from '@ethereumjs/evm';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { toChecksumAddress } from '@ethereumjs/util';
import { keccak256 } from '../crypto/index.js';
import { StateOverlay } from '../state/index.js';
import { BASE_FEE_PER_GAS, type BlockEnv } from './block-executor.js';
import { type CallArgs, MAX_INITCODE_SIZE, callerOf, intrinsicGas, runAsCall } from './call.js';
import { FEE_COLLECTOR, PARAMS_LOADED, transactionGasCapOf } from './common.js';
import { CallTimeoutError } from './deadline.js';
import { TX_ERROR_CODES, TxCheckError, buyGas, callFees, chainIdMismatch } from './fees.js';
import {
  type BlockOverrides,
  MaskedStorageState,
  OverrideError,
  type StateOverrideSet,
  applyStateOverrides,
  movePrecompiles,
  withBlockOverrides,
} from './overrides.js';
import { type SimLog, TransferLogCollector } from './sim-logs.js';
import type { EvmBaseState } from './state-adapter.js';
import { gethError } from './trace/call-tracer.js';
import { type PooledVm, acquireVm, releaseVm } from './vm-pool.js';

/** geth's limits (simulate.go): blocks past the base, calls in one block, calls in all. */
export const MAX_SIMULATE_BLOCKS = 256;
export const MAX_SIMULATE_CALLS_PER_BLOCK = 5000;
export const MAX_SIMULATE_TOTAL_CALLS = 10_000;
/** Seconds between a simulated block and the one before when its time is not given (geth). */
export const SIMULATE_TIME_INCREMENT = 12;

/** geth's codes for eth_simulateV1 (errors.go). */
export const SIM_ERROR_CODES = {
  reverted: 3,
  vmError: -32015,
  blockNumberInvalid: -38020,
  blockTimestampInvalid: -38021,
  clientLimitExceeded: -38026,
  maxInitCodeSize: -38025,
  server: -32000,
} as const;

export interface SimBlockSpec {
  block?: BlockOverrides;
  state?: StateOverrideSet;
  calls: CallArgs[];
}

export interface SimulateSpec {
  blocks: SimBlockSpec[];
  validation: boolean;
  traceTransfers: boolean;
  /** Gas all calls together may use (`--rpc-gascap`); 0n = no cap. */
  gasCap: bigint;
  /** Hash of the base block (the parent of the first simulated block). */
  baseHash: Uint8Array;
}

export interface SimCallResult {
  returnData: Uint8Array;
  logs: SimLog[];
  gasUsed: bigint;
  /** Gas the call used before refunds (geth's maxUsedGas: the gas limit it needs at least). */
  maxUsedGas: bigint;
  status: 0 | 1;
  error?: { code: number; message: string; data?: string };
}

/** A simulated call as the transaction it stands for (an unsigned EIP-1559 transaction, as geth builds it). */
export interface SimTx {
  hash: Uint8Array;
  from: string;
  to: string | null;
  nonce: bigint;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  gasPrice: bigint;
  value: bigint;
  input: Uint8Array;
  accessList: { address: string; storageKeys: string[] }[];
}

export interface SimBlockResult {
  number: number;
  timestamp: number;
  hash: Uint8Array;
  parentHash: Uint8Array;
  gasLimit: bigint;
  gasUsed: bigint;
  miner: string;
  baseFee: bigint;
  prevRandao: Uint8Array;
  txs: SimTx[];
  calls: SimCallResult[];
}

export type SimulateOutcome = { ok: true; blocks: SimBlockResult[] } | { ok: false; code: number; message: string };

/**
 * geth's sanitizeChain: numbers and times strictly increasing (defaults: the previous + 1 and + 12 s), a
 * gap in numbers filled with empty blocks, at most MAX_SIMULATE_BLOCKS past the base.
 */
export function sanitizeChain(blocks: SimBlockSpec[], baseNumber: number, baseTime: number): SimBlockSpec[] {
  const out: SimBlockSpec[] = [];
  let prevNumber = BigInt(baseNumber);
  let prevTime = BigInt(baseTime);
  const step = BigInt(SIMULATE_TIME_INCREMENT);
  for (const b of blocks) {
    const number = b.block?.number ?? prevNumber + 1n;
    if (number <= prevNumber) {
      throw new TxCheckError(`block numbers must be in order: ${number} <= ${prevNumber}`, SIM_ERROR_CODES.blockNumberInvalid);
    }
    if (number - BigInt(baseNumber) > BigInt(MAX_SIMULATE_BLOCKS)) {
      throw new TxCheckError('too many blocks', SIM_ERROR_CODES.clientLimitExceeded);
    }
    for (let n = prevNumber + 1n; n < number; n++) {
      prevTime += step;
      out.push({ block: { number: n, time: prevTime }, calls: [] });
    }
    const time = b.block?.time ?? prevTime + step;
    if (time <= prevTime) {
      throw new TxCheckError(`block timestamps must be in order: ${time} <= ${prevTime}`, SIM_ERROR_CODES.blockTimestampInvalid);
    }
    out.push({ ...b, block: { ...b.block, number, time } });
    prevNumber = number;
    prevTime = time;
  }
  return out;
}

const u64 = (n: bigint | number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

/** The simulation's state and its rules across blocks. */
class Simulation {
  readonly masked: MaskedStorageState;
  readonly state: StateOverlay;
  /** Hashes of the simulated blocks (BLOCKHASH of a simulated number). */
  readonly hashes = new Map<number, Uint8Array>();
  budget: bigint | null;

  constructor(
    readonly base: BlockEnv,
    view: EvmBaseState,
    readonly spec: SimulateSpec,
    readonly deadline: number,
  ) {
    this.masked = new MaskedStorageState(view);
    this.state = new StateOverlay(this.masked);
    this.budget = spec.gasCap === 0n ? null : spec.gasCap;
  }

  /** The environment of a simulated block: its number and time, its header overrides, its BLOCKHASH source. */
  private envOf(b: SimBlockSpec): BlockEnv {
    const o = b.block ?? {};
    // geth: without validation an unset base fee is 0 (no call fails for a price below it); with it, the
    // chain's rule (this chain's base fee is flat).
    const baseFee = o.baseFee ?? (this.spec.validation ? BASE_FEE_PER_GAS : 0n);
    const env = withBlockOverrides(this.base, { ...o, baseFee });
    const baseHeight = this.base.height;
    return {
      ...env,
      blockHash: async (h) => (h > baseHeight ? (this.hashes.get(h) ?? null) : this.base.blockHash(h)),
    };
  }

  async block(b: SimBlockSpec, parentHash: Uint8Array): Promise<SimBlockResult> {
    const env = this.envOf(b);
    const c = await acquireVm(env, this.state, this.masked);
    try {
      c.guard.deadline = this.deadline;
      if (b.state) {
        movePrecompiles(c.vm, b.state);
        await applyStateOverrides(c.adapter, this.state, this.masked, b.state);
      }
      const header = c.block.header;
      const gasLimit = header.gasLimit;
      const baseFee = header.baseFeePerGas ?? 0n;
      let gasUsed = 0n;
      const txs: SimTx[] = [];
      const calls: SimCallResult[] = [];
      for (const args of b.calls) {
        if (Date.now() > this.deadline) throw new CallTimeoutError();
        const { tx, result } = await this.call(c, args, gasLimit - gasUsed, baseFee);
        gasUsed += result.gasUsed;
        txs.push(tx);
        calls.push(result);
      }
      const hash = keccak256(Buffer.concat([parentHash, u64(env.height), u64(env.timestamp), ...txs.map((t) => t.hash)]));
      this.hashes.set(env.height, hash);
      return {
        number: env.height,
        timestamp: env.timestamp,
        hash,
        parentHash,
        gasLimit,
        gasUsed,
        miner: header.coinbase.toString(),
        baseFee,
        prevRandao: header.mixHash,
        txs,
        calls,
      };
    } finally {
      releaseVm(c);
    }
  }

  /** One call as geth's applyMessage runs it in a simulated block (validation rules as the mode says). */
  private async call(
    c: PooledVm,
    args: CallArgs,
    remaining: bigint,
    baseFee: bigint,
  ): Promise<{ tx: SimTx; result: SimCallResult }> {
    const validate = this.spec.validation;
    const wrongChain = chainIdMismatch(args, this.base.chainId);
    if (wrongChain) throw new TxCheckError(wrongChain, SIM_ERROR_CODES.server);
    const caller = callerOf(args);
    const from = toChecksumAddress(caller.toString());
    // What the previous call left in the VM (warm sets, transient storage), as between two transactions.
    c.vm.evm.journal.cleanJournal();
    (c.vm.evm as EVM).transientStorage.clear();
    const stateNonce = (await c.adapter.getAccount(caller))?.nonce ?? 0n;
    if (validate && args.nonce !== undefined && args.nonce !== stateNonce) {
      const high = args.nonce > stateNonce;
      throw new TxCheckError(
        `nonce too ${high ? 'high' : 'low'}: address ${from}, tx: ${args.nonce} state: ${stateNonce}`,
        high ? TX_ERROR_CODES.nonceTooHigh : TX_ERROR_CODES.nonceTooLow,
      );
    }
    const nonce = args.nonce ?? stateNonce;
    // From osaka on (EIP-7825) one transaction may use at most the cap: a call without gas gets no more than it.
    const txCap = transactionGasCapOf(c.common) ?? remaining;
    let gas = args.gas ?? (txCap < remaining ? txCap : remaining);
    if (gas > remaining) {
      throw new TxCheckError(`block gas limit reached: remaining: ${remaining}, required: ${gas}`, TX_ERROR_CODES.blockGasLimit);
    }
    if (gas > txCap) {
      throw new TxCheckError(`transaction gas limit too high (cap: ${txCap}, tx: ${gas})`, TX_ERROR_CODES.invalidParams);
    }
    const capped = this.budget !== null && gas > this.budget;
    if (capped && this.budget !== null) gas = this.budget;
    const data = args.data ?? new Uint8Array(0);
    if (!args.to && c.common.isActivatedEIP(3860) && data.length > MAX_INITCODE_SIZE) {
      throw new TxCheckError(
        `max initcode size exceeded: code size ${data.length} limit ${MAX_INITCODE_SIZE}`,
        SIM_ERROR_CODES.maxInitCodeSize,
      );
    }
    const value = args.value ?? 0n;
    const fees = callFees(args, baseFee);
    await buyGas(c, caller, fees, gas, value, !validate);
    const intrinsic = intrinsicGas(args, c.common);
    if (gas < intrinsic)
      throw new TxCheckError(`intrinsic gas too low: have ${gas}, want ${intrinsic}`, TX_ERROR_CODES.intrinsicGas);
    if (value > 0n && ((await c.adapter.getAccount(caller))?.balance ?? 0n) < value) {
      throw new TxCheckError(`insufficient funds for transfer: address ${from}`, TX_ERROR_CODES.insufficientFunds);
    }
    const collector = this.spec.traceTransfers
      ? new TransferLogCollector(c.vm, async (a) => (await c.adapter.getAccount(a as ReturnType<typeof callerOf>))?.balance ?? 0n)
      : null;
    let run: Awaited<ReturnType<typeof runAsCall>>;
    try {
      run = await runAsCall(c, { ...args, gas }, gas - intrinsic);
    } finally {
      collector?.detach();
    }
    const ex = run.execResult;
    const spent = intrinsic + ex.executionGasUsed;
    const refund = ex.gasRefund ?? 0n;
    const gasUsed = spent - (refund < spent / 5n ? refund : spent / 5n);
    await this.settle(c, caller, gas, gasUsed, fees.price, baseFee);
    if (this.budget !== null) {
      if (gasUsed > this.budget) {
        throw new TxCheckError(`RPC gas cap exhausted: need ${gasUsed}, remaining ${this.budget}`, SIM_ERROR_CODES.server);
      }
      this.budget -= gasUsed;
    }
    const err = ex.exceptionError;
    const result: SimCallResult = {
      returnData: ex.returnValue.slice(),
      logs: err
        ? []
        : collector
          ? collector.logs()
          : (ex.logs ?? []).map(([a, topics, d]) => ({
              address: `0x${Buffer.from(a).toString('hex')}`,
              topics,
              data: d,
            })),
      gasUsed,
      maxUsedGas: spent,
      status: err ? 0 : 1,
    };
    if (err) result.error = callError(err.error, ex.returnValue, capped);
    const tx = simTx(c, args, { from: caller.toString(), nonce, gas, fees, value, data });
    return { tx, result };
  }

  /** The unused gas back to the caller and the tip to the block's fee recipient (geth's refundGas and fee payment). */
  private async settle(
    c: PooledVm,
    caller: ReturnType<typeof callerOf>,
    gas: bigint,
    gasUsed: bigint,
    price: bigint,
    baseFee: bigint,
  ) {
    if (price === 0n) return;
    const back = (gas - gasUsed) * price;
    if (back > 0n) {
      const acc = await c.adapter.getAccount(caller);
      await c.adapter.modifyAccountFields(caller, { balance: (acc?.balance ?? 0n) + back });
    }
    const tip = price > baseFee ? (price - baseFee) * gasUsed : 0n;
    const coinbase = c.block.header.coinbase;
    if (tip > 0n && coinbase.toString() !== FEE_COLLECTOR) {
      const acc = await c.adapter.getAccount(coinbase);
      await c.adapter.modifyAccountFields(coinbase, { balance: (acc?.balance ?? 0n) + tip });
    }
  }
}

/** geth's per-call error object: a revert (code 3, its data), or another EVM error (-32015). */
function callError(evmError: string, returnValue: Uint8Array, capped: boolean): NonNullable<SimCallResult['error']> {
  if (evmError === 'revert') {
    const data = `0x${Buffer.from(returnValue).toString('hex')}`;
    const reason = errorString(returnValue);
    return {
      code: SIM_ERROR_CODES.reverted,
      message: reason === null ? 'execution reverted' : `execution reverted: ${reason}`,
      data,
    };
  }
  const message = gethError(evmError) + (capped ? " (gas limit was capped by the RPC server's global gas cap)" : '');
  return { code: SIM_ERROR_CODES.vmError, message };
}

/** The reason of a Solidity Error(string) revert, as geth's abi.UnpackRevert reads it (null otherwise). */
function errorString(data: Uint8Array): string | null {
  const hex = Buffer.from(data).toString('hex');
  if (!hex.startsWith('08c379a0') || hex.length < 8 + 128) return null;
  const len = Number.parseInt(hex.slice(8 + 64, 8 + 128), 16);
  if (hex.length < 8 + 128 + len * 2) return null;
  return Buffer.from(hex.slice(8 + 128, 8 + 128 + len * 2), 'hex').toString('utf8');
}

/** The call as geth's ToTransaction(DynamicFeeTxType) makes it: unsigned (v, r, s zero), hashed as such. */
function simTx(
  c: PooledVm,
  args: CallArgs,
  t: { from: string; nonce: bigint; gas: bigint; fees: ReturnType<typeof callFees>; value: bigint; data: Uint8Array },
): SimTx {
  const accessList = args.accessList ?? [];
  const tx = createFeeMarket1559Tx(
    {
      chainId: c.common.chainId(),
      nonce: t.nonce,
      gasLimit: t.gas,
      maxFeePerGas: t.fees.feeCap,
      maxPriorityFeePerGas: t.fees.tip,
      to: args.to as `0x${string}` | undefined,
      value: t.value,
      data: t.data,
      accessList: accessList as never,
      v: 0n,
      r: 0n,
      s: 0n,
    },
    { common: c.common, params: PARAMS_LOADED },
  );
  return {
    hash: tx.hash(),
    from: t.from.toLowerCase(),
    to: args.to ?? null,
    nonce: t.nonce,
    gas: t.gas,
    maxFeePerGas: t.fees.feeCap,
    maxPriorityFeePerGas: t.fees.tip,
    gasPrice: t.fees.price,
    value: t.value,
    input: t.data,
    accessList,
  };
}

/**
 * Runs the simulation over `view` (the state after the base block `base`): the blocks in order, or the first
 * failure that ends it (geth's error codes); a timeout throws CallTimeoutError.
 */
export async function simulateBlocks(
  base: BlockEnv,
  view: EvmBaseState,
  spec: SimulateSpec,
  deadline: number,
): Promise<SimulateOutcome> {
  try {
    const blocks = sanitizeChain(spec.blocks, base.height, base.timestamp);
    const sim = new Simulation(base, view, spec, deadline);
    const out: SimBlockResult[] = [];
    let parent = spec.baseHash;
    for (const b of blocks) {
      const r = await sim.block(b, parent);
      out.push(r);
      parent = r.hash;
    }
    return { ok: true, blocks: out };
  } catch (err) {
    if (err instanceof TxCheckError) return { ok: false, code: err.code, message: err.message };
    if (err instanceof OverrideError) return { ok: false, code: SIM_ERROR_CODES.server, message: err.message };
    throw err;
  }
}
