import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlock } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { type VM, createVM, runTx } from '@ethereumjs/vm';
import {
  BASE_FEE_PER_GAS,
  BLOCK_GAS_LIMIT,
  chainCommon,
  checkEvmGasRules,
  decodeRawTransaction,
  markEvmChecked,
  typedTransactionOf,
} from '../ts/execution/index.js';
import type { Proposal } from '../ts/chain/chain.js';
import { keyPairFromPrivate, randomKeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { fromHex, to0x } from '../ts/util/hex.js';
import { type WorkloadName, WORKLOADS, workloadBlocks } from './evm-ceiling-workloads.js';
import { CHAIN_ID, type DevChain, EvmSender, HARDFORK, callData, deployData, devParams, openChain } from './evm-fixtures.js';
import type { Packed } from './evm-ceiling-pack.js';
import { MapStateManager } from './evm-map-state.js';
import { senderKeys } from './fixtures.js';
import { profiled } from './cpu-profile.js';

/**
 * The interpreter's ceiling (issue 27, section 2): the same blocks (bench/evm-ceiling-workloads.ts: ERC-20
 * transfers from distinct senders; a mix of deployments, storage-heavy calls and reverts; a tight loop) run
 * (a) through the node's block executor (Chain.propose: execute + receipts + state root, what a proposer spends
 * before its commit) and (b) through a bare `@ethereumjs/vm` over its default in-memory MerkleStateManager:
 * runTx per transaction, then the state root, nothing else; and (c) the same over a MapStateManager
 * (bench/evm-map-state.ts: plain maps with an undo log; no trie, no state root), the interpreter alone. All get
 * the transactions decoded with their senders recovered (admission did that); every path must agree on the gas
 * and on each transaction's status. Reported in Mgas/s of wall time and of process CPU time (the machine is
 * shared: CPU time is the steadier number), median of BENCH_ROUNDS (5) warm rounds.
 *
 *   node dist/bench/evm-ceiling.js   BENCH_ROUNDS, BENCH_HOLDERS (850: ~29M gas; each transfer 34,250 gas, limit 35,000),
 *                                    BENCH_WORKLOADS (erc20,mix,loop), BENCH_TRIE=0 (skip (b)), BENCH_PACK=0 (skip
 *                                    the packing rounds: what the default packing takes of an ERC-20 block),
 *                                    BENCH_PROFILE=DIR (a CPU profile of every measured (a) run)
 */

const E18 = 10n ** 18n;
const COINBASE = `0x${'00'.repeat(19)}c0`;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Timed {
  gas: bigint;
  wallMs: number;
  cpuMs: number;
}

async function timed<T extends { gas: bigint }>(run: () => Promise<T>): Promise<T & Timed> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = await run();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ...out, wallMs, cpuMs: (c.user + c.system) / 1000 };
}

/** The bare VM's side: its own in-memory state, fed the same transactions in the same order as the chain. */
class BareVm {
  private number = 1n;
  private constructor(
    readonly vm: VM,
    private readonly stateRoot: boolean,
  ) {}

  /** `trie`: the default MerkleStateManager and a state root per block; else MapStateManager (maps, no root). */
  static async create(funded: readonly string[], trie: boolean): Promise<BareVm> {
    const common = chainCommon(CHAIN_ID, HARDFORK);
    const vm = await createVM(trie ? { common } : { common, stateManager: new MapStateManager({ common }) });
    for (const a of funded) await vm.stateManager.putAccount(createAddressFromString(a), new Account(0n, 10n ** 24n));
    return new BareVm(vm, trie);
  }

  /** Decoded, sender recovered: the state admission leaves a transaction in. */
  static decode(txs: readonly SignedTransaction[]): TypedTransaction[] {
    const common = chainCommon(CHAIN_ID, HARDFORK);
    return txs.map((t) => {
      const typed = decodeRawTransaction(fromHex(t.signature), common);
      typed.getSenderAddress();
      return typed;
    });
  }

  /** One block: runTx per transaction, then the state root. Returns the gas used and each transaction's status. */
  async run(txs: readonly TypedTransaction[]): Promise<{ gas: bigint; statuses: number[] }> {
    const common = this.vm.common;
    const block = createBlock(
      {
        header: {
          number: this.number++,
          timestamp: 1_700_000_000n + this.number,
          gasLimit: BLOCK_GAS_LIMIT,
          baseFeePerGas: BASE_FEE_PER_GAS,
          coinbase: COINBASE as `0x${string}`,
        },
      },
      { common },
    );
    let gas = 0n;
    const statuses: number[] = [];
    for (const tx of txs) {
      const r = await runTx(this.vm, { tx, block, skipHardForkValidation: true, blockGasUsed: gas });
      statuses.push(r.execResult.exceptionError ? 0 : 1);
      gas += r.totalGasSpent;
    }
    if (this.stateRoot) await this.vm.stateManager.getStateRoot();
    return { gas, statuses };
  }
}

/**
 * Chain.propose over pool transactions: admission (mempool/admission.ts) checked each one's stateless rules
 * (signature, stored fields, gas caps) and marked it, so the proposer does not check it again; here the same.
 */
async function nodeBlock(dev: DevChain, txs: readonly SignedTransaction[]): Promise<{ gas: bigint; proposal: Proposal }> {
  const proposal = await dev.chain.propose(txs, dev.validator, dev.chain.head.timestamp + 1);
  if (proposal.result.deferred.length || proposal.result.dropped.length) {
    throw new Error(
      `node: the block did not take every transaction (${proposal.result.included.length} included, ${proposal.result.gasUsed} gas, ${proposal.result.deferred.length} deferred, dropped: ${proposal.result.dropped.map((d) => d.reason).join(', ')})`,
    );
  }
  return { gas: proposal.block.gas_used, proposal };
}

export interface CeilingResult {
  /** Gas of one measured block. */
  gas: bigint;
  /** Transactions of one measured block, and how many of them failed (reverted or ran out of gas). */
  txs: number;
  failed: number;
  node: Timed[];
  /** Bare VM, MerkleStateManager + state root (empty when skipped). */
  bare: Timed[];
  /** Bare VM, MapStateManager (bench/evm-map-state.ts), no state root: the interpreter alone. */
  interpreter: Timed[];
  /** ERC-20 only, with `pack`: what the default packing takes of a block's worth (evm-ceiling-pack.ts). */
  pack?: { slowest: Packed[]; measured: Packed[] };
}

export interface CeilingOptions {
  rounds?: number;
  holders?: number;
  workloads?: readonly WorkloadName[];
  /** Run (b), the bare VM over @ethereumjs' trie (slow: ~1.6 s per 29M-gas block). */
  trie?: boolean;
  /** Also measure what the proposer's default packing takes of an ERC-20 block (section 4). */
  pack?: boolean;
  /** A directory: a CPU profile of each measured (a) run is written there. */
  profileDir?: string;
}

export async function benchEvmCeiling(o: CeilingOptions = {}): Promise<Map<WorkloadName, CeilingResult>> {
  const rounds = o.rounds ?? 5;
  const holders = senderKeys(o.holders ?? 850).map((k) => new EvmSender(k));
  const deployer = new EvmSender(keyPairFromPrivate('ec'.repeat(32)));
  const funded = [...holders.map((h) => h.address), deployer.address];
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-ceiling-'));
  const validator = randomKeyPair();
  const dev = await openChain(dir, devParams(validator, funded), validator, 1000);
  const bare = o.trie === false ? null : await BareVm.create(funded, true);
  const interpreter = await BareVm.create(funded, false);
  const profile = o.profileDir;
  const common = chainCommon(CHAIN_ID, HARDFORK);
  if (profile) mkdirSync(profile, { recursive: true });
  /** A block on every side, the chain's committed; the same gas and statuses everywhere, or it throws. */
  const all = async (txs: SignedTransaction[], profileFile?: string) => {
    for (const tx of txs) {
      checkEvmGasRules(typedTransactionOf(tx, common), BLOCK_GAS_LIMIT);
      markEvmChecked(tx);
    }
    const a = await profiled(profileFile, () => timed(() => nodeBlock(dev, txs)));
    await dev.chain.commit(a.proposal);
    const statuses = a.proposal.result.receipts.map((r) => r.status);
    const b = bare ? await timed(() => bare.run(BareVm.decode(txs))) : null;
    const c = await timed(() => interpreter.run(BareVm.decode(txs)));
    for (const other of b ? [b, c] : [c]) {
      if (a.gas !== other.gas) throw new Error(`gas differs: node ${a.gas}, bare VM ${other.gas}`);
      const i = statuses.findIndex((s, i) => s !== other.statuses[i]);
      if (i >= 0) throw new Error(`transaction ${i}: node status ${statuses[i]}, bare VM ${other.statuses[i]}`);
    }
    return { a, b, c, failed: statuses.filter((s) => s !== 1).length };
  };
  try {
    const setup = async (txs: SignedTransaction[]) => {
      const { a, failed } = await all(txs);
      if (failed) throw new Error('a setup transaction failed');
      return a.proposal.result.receipts;
    };
    const created = await setup([
      deployer.tx(undefined, deployData('Token', ['Ceiling', 'CEIL', 10n ** 30n])),
      deployer.tx(undefined, deployData('Store')),
    ]);
    const [token, store] = created.map((r) => {
      if (!r.contractAddress) throw new Error('no contract created');
      return to0x(r.contractAddress as Uint8Array);
    });
    for (let i = 0; i < holders.length; i += 400) {
      await setup(
        holders.slice(i, i + 400).map((h) => deployer.tx(token, callData('Token', 'transfer', [h.address, 1000n * E18]))),
      );
    }
    const { setup: prefill, blocks } = workloadBlocks(holders, { token, store });
    await setup(prefill());
    const out = new Map<WorkloadName, CeilingResult>();
    for (const w of o.workloads ?? WORKLOADS) {
      await all(blocks[w]()); // cold: JIT, caches
      const r: CeilingResult = { gas: 0n, txs: 0, failed: 0, node: [], bare: [], interpreter: [] };
      for (let i = 0; i < rounds; i++) {
        const txs = blocks[w]();
        const { a, b, c, failed } = await all(txs, profile && join(profile, `${w}-${i}.cpuprofile`));
        Object.assign(r, { gas: a.gas, txs: txs.length, failed });
        r.node.push(a);
        if (b) r.bare.push(b);
        r.interpreter.push(c);
      }
      if (w === 'erc20' && o.pack) {
        // Loaded here only: a baseline build without the pack meter runs the rest of this bench (BENCH_PACK=0).
        const { packRounds } = await import('./evm-ceiling-pack.js');
        r.pack = await packRounds(dev, holders, blocks.erc20, rounds);
      }
      out.set(w, r);
    }
    return out;
  } finally {
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mgas = (t: Timed, ms: number): number => Number(t.gas) / 1e6 / (ms / 1000);
const cpuRate = (ts: Timed[]) => median(ts.map((t) => mgas(t, t.cpuMs)));

async function main(): Promise<void> {
  const env = process.env;
  const workloads = (env.BENCH_WORKLOADS?.split(',') ?? WORKLOADS) as WorkloadName[];
  for (const w of workloads) if (!WORKLOADS.includes(w)) throw new Error(`BENCH_WORKLOADS: no workload ${w}`);
  const load0 = loadavg()[0].toFixed(2);
  const results = await benchEvmCeiling({
    rounds: Number(env.BENCH_ROUNDS ?? 5),
    holders: Number(env.BENCH_HOLDERS ?? 850),
    workloads,
    trie: env.BENCH_TRIE !== '0',
    profileDir: env.BENCH_PROFILE,
    pack: env.BENCH_PACK !== '0',
  });
  const load1 = loadavg()[0].toFixed(2);
  const row = (name: string, ts: Timed[]) => {
    if (!ts.length) return;
    const wall = ts.map((t) => mgas(t, t.wallMs));
    const cpu = ts.map((t) => mgas(t, t.cpuMs));
    console.log(
      `| ${name} | ${median(cpu).toFixed(1)} Mgas/s (${cpu.map((x) => x.toFixed(1)).join(' / ')}) | ${median(wall).toFixed(1)} Mgas/s (${wall.map((x) => x.toFixed(1)).join(' / ')}) | ${median(ts.map((t) => t.cpuMs)).toFixed(0)} ms |`,
    );
  };
  console.log(`1-min load average ${load0} -> ${load1}`);
  for (const [w, r] of results) {
    console.log(
      `\n${w}: ${r.txs} transactions (${r.failed} failed by design), ${(Number(r.gas) / 1e6).toFixed(2)}M gas per block`,
    );
    console.log(
      '| Path | Mgas/s of CPU time (median; runs) | Mgas/s of wall time (median; runs) | CPU per block |\n|---|---|---|---|',
    );
    row('(a) node block executor (Chain.propose: execute, receipts, state root)', r.node);
    row('(b) bare @ethereumjs/vm, in-memory MerkleStateManager (runTx each, state root)', r.bare);
    row('(c) bare @ethereumjs/vm, MapStateManager (runTx each; maps, no trie, no state root)', r.interpreter);
    const vsTrie = r.bare.length ? `(a) / (b): ${(cpuRate(r.node) / cpuRate(r.bare)).toFixed(2)}; ` : '';
    console.log(`CPU time: ${vsTrie}(a) / (c): ${(cpuRate(r.node) / cpuRate(r.interpreter)).toFixed(2)}`);
    if (r.pack) {
      console.log(
        `\nPacking (--block-pack-gas 5M, --block-pack-ms 400) of ${r.txs} pending transfers, per proposal: transfers / gas / execution wall ms`,
      );
      for (const [mode, ps] of Object.entries(r.pack)) {
        const runs = ps.map((p) => `${p.included} / ${(Number(p.gas) / 1e6).toFixed(2)}M / ${p.executeMs.toFixed(0)} ms`);
        console.log(`- ${mode} rate: median ${median(ps.map((p) => p.included))} transfers; ${runs.join('; ')}`);
      }
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
