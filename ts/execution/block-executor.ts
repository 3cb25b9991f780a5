import type { Common } from '@ethereumjs/common';
import { type VM, runTx } from '@ethereumjs/vm';
import {
  applyNativeTransaction,
  endBlock,
  hasBondedActiveSet,
  type OperationEnv,
  type NativeRuleContext,
  checkNativeTransaction,
  operationActivation,
  TREASURY_ADDRESS,
  blockReward,
  getSupply,
  maxSupplyBase,
  putSupply,
  type SignedTransaction,
  NATIVE_TX_GAS,
  baseToWei,
  weiToBase,
} from '../ledger/index.js';
import { accountKey, getAccount, putAccount, type KeyStr, StateOverlay, type StateReader } from '../state/index.js';
import { FEE_COLLECTOR, chainCommon } from './common.js';
import { CallTimeoutError, installDeadline } from './deadline.js';
import { checkStoredEvmTransaction } from './evm-rules.js';
import { isEvmTransaction, typedTransactionOf } from './evm-tx.js';
import { impersonatedSender } from './impersonation.js';
import { type LogRecord, type ReceiptRecord, EMPTY_BLOOM, logsBloom } from './receipts.js';
import { RemoteStateError } from './remote-state.js';
import type { EvmBaseState, EvmStateAdapter } from './state-adapter.js';
import { type BlockEnv, blockGasLimit, fitsPack } from './block-env.js';
import { type EvmBlock, createChainVm, evmBlockFor, reuseChainVm, vmKey } from './vm-factory.js';
import { packMeter } from './pack-meter.js';
import { ParallelBlock } from './parallel/session.js';
export {
  BASE_FEE_PER_GAS,
  BLOCK_GAS_LIMIT,
  BLOCK_GAS_TARGET,
  type BlockEnv,
  type PackLimit,
  blockGasLimit,
  fitsPack,
} from './block-env.js';
export { evmOptions, vmKey } from './vm-factory.js';

export interface ExecutionResult {
  included: SignedTransaction[];
  /** Transactions that can no longer apply; the pool drops them (and their sender's later nonces). */
  dropped: { tx: SignedTransaction; reason: string }[];
  /** Valid transactions that did not fit (block gas); they stay pending for the next block. */
  deferred: SignedTransaction[];
  /** One per included transaction, same order. */
  receipts: ReceiptRecord[];
  /** EVM gas used by the block (native transfers count no EVM gas). */
  gasUsed: bigint;
  logsBloom: Uint8Array;
  feesWei: bigint;
  burnedWei: bigint;
  rewardBase: bigint;
  /** The account credited with the coinbase (reward + the proposer's fee share): the proposer, or the treasury. */
  coinbase: string;
}

const EMPTY = new Uint8Array(0);

/**
 * The transaction rules' context of a block (ledger/rules.ts): the same one block validation builds
 * (chain/validate-block.ts txRuleContext), derived from the block's own fields so worker threads need
 * nothing more than the plain environment.
 */
const ruleContext = (env: BlockEnv): NativeRuleContext => ({
  chainId: env.chainId,
  height: env.height,
  now: env.timestamp,
  operations: operationActivation(env.ledger),
});

/** The part of the block environment native operations see. */
export const operationEnv = (env: BlockEnv): OperationEnv => ({
  height: env.height,
  timestamp: env.timestamp,
  proposer: env.proposer,
  chainId: env.chainId,
  ledger: env.ledger,
  ...(env.lastCommit ? { lastCommit: env.lastCommit } : {}),
});

function statelessRuleError(tx: SignedTransaction, evmTx: boolean, env: BlockEnv, rules: NativeRuleContext): string | null {
  try {
    if (evmTx) {
      if (env.height >= env.evmActivationHeight)
        checkStoredEvmTransaction(tx, chainCommon(env.chainId, env.hardfork), env.devChain, blockGasLimit(env));
    } else checkNativeTransaction(tx, rules);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The VM a block's EVM transactions run on, over that block's overlay. */
export interface BlockVm {
  vm: VM;
  common: Common;
  block: EvmBlock;
  /** Its pool (blockVm without a deadline), or null: a VM with a deadline guard is never reused. */
  key: string | null;
  adapter: EvmStateAdapter;
  /** The environment BLOCKHASH reads (the block it serves now). */
  holder: { env: BlockEnv };
}

/**
 * Block VMs kept between blocks, apart from the calls' and traces' (vm-pool.ts): creating one costs ~0.3-0.9 ms
 * (opcode tables, precompiles, the Common's parameter merges), more than executing a block of one transfer
 * (the dev chain's automine makes a block per transaction). A VM keeps nothing of a block that a transaction
 * of the same block would not already see: runTx clears the journal's warm sets, touched accounts and
 * transient storage after every transaction, and the next block rebases its state adapter, its header and
 * its BLOCKHASH source (test: test/evm/gas-accounting.test.ts, the same call costs the same gas in consecutive
 * blocks and sees no transient storage of the one before).
 */
const idleBlockVms = new Map<string, BlockVm[]>();

/** One VM per block that holds EVM transactions, over that block's overlay; `deadline` stops its runs (traces). */
export async function blockVm(env: BlockEnv, state: StateOverlay, base: EvmBaseState, deadline?: number): Promise<BlockVm> {
  const key = deadline === undefined ? vmKey(env) : null;
  const idle = key === null ? undefined : idleBlockVms.get(key)?.pop();
  if (idle) {
    reuseChainVm(idle, state, base);
    idle.holder.env = env;
    idle.block = evmBlockFor(env, idle.common);
    return idle;
  }
  const holder = { env };
  const { vm, common, adapter } = await createChainVm(env, state, base, (n) => holder.env.blockHash(n));
  if (deadline !== undefined) installDeadline(vm).deadline = deadline;
  return { vm, common, block: evmBlockFor(env, common), key, adapter, holder };
}

/** A block's VM back to its pool once the block ran (at most two kept per chain: production and validation). */
function releaseBlockVm(v: BlockVm): void {
  if (v.key === null) return;
  let list = idleBlockVms.get(v.key);
  if (!list) idleBlockVms.set(v.key, (list = []));
  if (list.length < 2) list.push(v);
}

/** Options of executeBlock. */
export interface ExecuteOptions {
  /** false applies the transactions only (tracing re-runs a block's prefix): no fees, reward or end-of-block work. */
  finish: boolean;
  /** Epoch milliseconds: past it the run stops with CallTimeoutError (a traced block's prefix). */
  deadline?: number;
}

/**
 * A native operation over a remote view (a trace worker, where reads are fetched by message): it runs on a
 * child overlay until it ran with every value it reads at hand (EvmBaseState.runSync), then its writes land.
 */
async function applyNativeRemote(
  state: StateOverlay,
  runSync: <T>(fn: () => T) => Promise<T>,
  tx: SignedTransaction,
  opEnv: OperationEnv,
): Promise<ReturnType<typeof applyNativeTransaction>> {
  const { child, outcome } = await runSync(() => {
    const child = new StateOverlay(state);
    return { child, outcome: applyNativeTransaction(child, tx, opEnv) };
  });
  state.absorb(child);
  return outcome;
}

/** Account keys of the transactions' senders and recipients and of `more` addresses (repeats included). */
function* namedAccountKeys(txs: readonly SignedTransaction[], more: readonly string[]): IterableIterator<KeyStr> {
  for (const a of more) yield accountKey(a);
  for (const tx of txs) {
    yield accountKey(tx.from_address);
    if (tx.to_address.length === 42) yield accountKey(tx.to_address);
  }
}

/** Errors that end a re-execution as they are (its time is up, its remote state is gone), not a dropped transaction. */
const isAbort = (err: unknown): boolean => err instanceof CallTimeoutError || err instanceof RemoteStateError;

/**
 * Execute a block's transactions in order on the overlay: native transfers by the ledger rules, EVM
 * transactions through @ethereumjs/vm. Every fee (native or EVM gas) is split: floor(fee/2) to the
 * proposer, the rest burned; then the block reward is minted to the proposer within the supply cap.
 */
export async function executeBlock(
  env: BlockEnv,
  state: StateOverlay,
  base: EvmBaseState,
  txs: readonly SignedTransaction[],
  opts: ExecuteOptions = { finish: true },
): Promise<ExecutionResult> {
  const r: ExecutionResult = {
    included: [],
    dropped: [],
    deferred: [],
    receipts: [],
    gasUsed: 0n,
    logsBloom: EMPTY_BLOOM(),
    feesWei: 0n,
    burnedWei: 0n,
    rewardBase: 0n,
    coinbase: env.proposer,
  };
  const startedAt = performance.now();
  let toProposerWei = 0n;
  // Native fees summed in base units and converted to wei once (the conversion is exact: a product).
  let nativeFeesBase = 0n;
  let nativeToProposerBase = 0n;
  let cumulative = 0n;
  let evm: BlockVm | null = null;
  // Time spent in EVM transactions (the pack meter's measure, and this block's own cost per gas so far).
  let evmMs = 0;
  const measuredMsPerGas = env.pack ? packMeter.msPerGas() : undefined;
  const deferredSenders = new Set<string>();
  const collectorKey = accountKey(FEE_COLLECTOR);
  // The accounts the block names, read from disk in one multi-get where the base reads from disk (state-store.ts).
  base.prefetch?.(namedAccountKeys(txs, [env.proposer, FEE_COLLECTOR]));
  const opEnv = operationEnv(env);
  const rules = ruleContext(env);
  const runSync = base.runSync?.bind(base);
  // Parallel execution (parallel/session.ts): workers speculate on later transactions; null = sequential.
  const par = ParallelBlock.start(env, state, base, txs, opts.deadline);

  // The workers stop however the loop ends (a deadline's abort, a failed read).
  try {
    for (const tx of txs) {
      if (opts.deadline !== undefined && Date.now() > opts.deadline) throw new CallTimeoutError();
      if (deferredSenders.has(tx.from_address)) {
        r.deferred.push(tx);
        continue;
      }
      // The stateless transaction rules (remembered per transaction, so nearly free for pool
      // transactions): a proposer never packs what block validation would refuse.
      const evmTx = isEvmTransaction(tx);
      const ruleError = statelessRuleError(tx, evmTx, env, rules);
      if (ruleError) {
        r.dropped.push({ tx, reason: ruleError });
        continue;
      }
      if (!evmTx) {
        const outcome = runSync ? await applyNativeRemote(state, runSync, tx, opEnv) : applyNativeTransaction(state, tx, opEnv);
        if ('dropped' in outcome) {
          r.dropped.push({ tx, reason: outcome.dropped });
          continue;
        }
        // Spec: floor(fee/2) in base units for native fees; EVM fees below are split in wei.
        nativeFeesBase += tx.fee;
        nativeToProposerBase += tx.fee / 2n;
        // Native transfers report their flat 21000 gas but add nothing to the block's (EVM) gasUsed, so
        // cumulativeGasUsed counts EVM gas only and equals the block's gasUsed after its last receipt.
        r.included.push(tx);
        r.receipts.push({
          status: outcome.status,
          gasUsed: NATIVE_TX_GAS,
          cumulativeGasUsed: cumulative,
          effectiveGasPrice: 0n,
          type: 0,
          contractAddress: null,
          logs: [],
          output: outcome.status === 0 ? Buffer.from(outcome.failure, 'utf8') : EMPTY,
          ...(outcome.events.length ? { events: outcome.events } : {}),
        });
        continue;
      }
      if (env.height < env.evmActivationHeight) {
        r.dropped.push({ tx, reason: 'EVM not active yet' });
        continue;
      }
      evm ??= await blockVm(env, state, base, opts.deadline);
      const typed = typedTransactionOf(tx, evm.common);
      const evmStart = performance.now();
      const msPerGas =
        measuredMsPerGas === undefined || r.gasUsed === 0n
          ? measuredMsPerGas
          : Math.max(measuredMsPerGas, evmMs / Number(r.gasUsed));
      if (!fitsPack(env.pack, r.gasUsed, typed.gasLimit, evmStart - startedAt, blockGasLimit(env), msPerGas)) {
        deferredSenders.add(tx.from_address);
        r.deferred.push(tx);
        continue;
      }
      let result: Awaited<ReturnType<typeof runTx>>;
      const taken = par?.take(tx, state);
      if (taken && 'dropped' in taken) {
        r.dropped.push({ tx, reason: taken.dropped });
        continue;
      }
      // The dev chain skips EIP-3607 for impersonated senders (an impersonated contract sends), as Hardhat and anvil.
      if (env.devChain && impersonatedSender(typed) !== null) evm.adapter.hideSenderCode(typed.getSenderAddress().bytes);
      try {
        result = taken
          ? taken.result
          : await runTx(evm.vm, { tx: typed, block: evm.block, skipHardForkValidation: true, blockGasUsed: r.gasUsed });
      } catch (err) {
        if (isAbort(err)) throw err;
        r.dropped.push({ tx, reason: (err as Error).message.split(' (')[0] });
        continue;
      } finally {
        evm.adapter.hideSenderCode(null);
      }
      // The VM paid the priority part of the fee to the collector and burned the base part; replace
      // that with the node's rule: half of the whole fee to the proposer, the rest burned.
      state.delete(collectorKey);
      const fee = result.amountSpent;
      r.feesWei += fee;
      toProposerWei += fee / 2n;
      r.gasUsed += result.totalGasSpent;
      cumulative += result.totalGasSpent;
      const logs: LogRecord[] = (result.execResult.logs ?? []).map(([address, topics, data]) => ({ address, topics, data }));
      logsBloom(logs, r.logsBloom);
      r.included.push(tx);
      r.receipts.push({
        status: result.execResult.exceptionError ? 0 : 1,
        gasUsed: result.totalGasSpent,
        cumulativeGasUsed: cumulative,
        effectiveGasPrice: result.totalGasSpent > 0n ? fee / result.totalGasSpent : 0n,
        type: typed.type,
        contractAddress: result.createdAddress?.bytes ?? null,
        logs,
        output: result.execResult.returnValue ?? EMPTY,
      });
      evmMs += performance.now() - evmStart;
    }
  } finally {
    par?.close();
  }

  // Back to the pool once every transaction ran (a run that threw leaves its VM to the garbage collector).
  if (evm) releaseBlockVm(evm);
  if (opts.finish && opts.deadline === undefined) packMeter.record(r.gasUsed, evmMs);
  r.feesWei += baseToWei(nativeFeesBase);
  toProposerWei += baseToWei(nativeToProposerBase);
  if (!opts.finish) return r;
  r.burnedWei = r.feesWei - toProposerWei;
  const supply = getSupply(state);
  r.rewardBase = blockReward(env.height, weiToBase(supply.minted), maxSupplyBase(env.height, env.tokenomicsV2Height));
  // The coinbase (reward + the proposer's half of the fees): to the proposer before reward distribution
  // v2, to the protocol treasury from it, which the staking module's end-of-block work distributes.
  const credit = toProposerWei + baseToWei(r.rewardBase);
  r.coinbase = coinbaseRecipient(env, state);
  if (credit > 0n) {
    const recipient = getAccount(state, r.coinbase);
    recipient.balance += credit;
    putAccount(state, r.coinbase, recipient);
  }
  if (r.rewardBase > 0n || r.burnedWei > 0n) {
    putSupply(state, { minted: supply.minted + baseToWei(r.rewardBase), burned: supply.burned + r.burnedWei });
  }
  endBlock(state, opEnv);
  return r;
}

/**
 * Who receives a block's coinbase: the proposer before the reward-distribution-v2 height; from it the
 * treasury, whose balance the staking module distributes to the stake of the active set. A chain whose
 * active set has no bonded stake (a PoA authority set, a dev chain) has no one to distribute to: the
 * proposer keeps the coinbase there (docs/economics.md).
 */
export const coinbaseRecipient = (env: Pick<BlockEnv, 'height' | 'proposer' | 'ledger'>, state: StateReader): string =>
  env.height >= env.ledger.activation.rewardV2 && hasBondedActiveSet(state) ? TREASURY_ADDRESS : env.proposer;
