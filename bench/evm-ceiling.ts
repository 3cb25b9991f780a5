import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlock } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, createAddressFromString } from '@ethereumjs/util';
import { type VM, createVM, runTx } from '@ethereumjs/vm';
import { BASE_FEE_PER_GAS, BLOCK_GAS_LIMIT, chainCommon, decodeRawTransaction } from '../ts/execution/index.js';
import type { Proposal } from '../ts/chain/chain.js';
import { keyPairFromPrivate, randomKeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { fromHex, to0x } from '../ts/util/hex.js';
import { CHAIN_ID, type DevChain, EvmSender, HARDFORK, callData, deployData, devParams, openChain } from './evm-fixtures.js';
import { MapStateManager } from './evm-map-state.js';
import { senderKeys } from './fixtures.js';

/**
 * The interpreter's ceiling (issue 27, section 2): the same block of ERC-20 transfers (each from its own
 * sender) run (a) through the node's block executor (Chain.propose: execute + receipts + state root, what a
 * proposer spends before its commit) and (b) through a bare `@ethereumjs/vm` over its default in-memory
 * MerkleStateManager: runTx per transaction, then the state root, nothing else; and (c) the same over a
 * MapStateManager (bench/evm-map-state.ts: plain maps with an undo log; no trie, no state root), the interpreter
 * alone. All get the transactions
 * decoded with their senders recovered (admission did that). Reported in Mgas/s of wall time and of process
 * CPU time (the machine is shared: CPU time is the steadier number), median of BENCH_ROUNDS (5) warm rounds.
 *
 *   node dist/bench/evm-ceiling.js           BENCH_ROUNDS, BENCH_HOLDERS (850: ~29M gas; each transfer 34,250 gas, limit 35,000)
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

  /** One block: runTx per transaction, then the state root. Returns the gas used; throws if any failed. */
  async run(txs: readonly TypedTransaction[]): Promise<{ gas: bigint }> {
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
    for (const tx of txs) {
      const r = await runTx(this.vm, { tx, block, skipHardForkValidation: true, blockGasUsed: gas });
      if (r.execResult.exceptionError) {
        throw new Error(
          `bare VM: ${r.execResult.exceptionError.error} (tx ${txs.indexOf(tx)} of ${txs.length}, gas ${r.totalGasSpent} of ${tx.gasLimit})`,
        );
      }
      gas += r.totalGasSpent;
    }
    if (this.stateRoot) await this.vm.stateManager.getStateRoot();
    return { gas };
  }
}

async function nodeBlock(dev: DevChain, txs: readonly SignedTransaction[]): Promise<{ gas: bigint; proposal: Proposal }> {
  const proposal = await dev.chain.propose(txs, dev.validator, dev.chain.head.timestamp + 1);
  if (proposal.result.deferred.length || proposal.result.dropped.length) {
    throw new Error('node: the block did not take every transaction');
  }
  const failed = proposal.result.receipts.findIndex((r) => r.status !== 1);
  if (failed >= 0) throw new Error(`node: transaction ${failed} of the block failed`);
  return { gas: proposal.block.gas_used, proposal };
}

export interface CeilingResult {
  node: Timed[];
  /** Bare VM, MerkleStateManager + state root. */
  bare: Timed[];
  /** Bare VM, MapStateManager (bench/evm-map-state.ts), no state root: the interpreter alone. */
  interpreter: Timed[];
}

export async function benchEvmCeiling(rounds = 5, holderCount = 850): Promise<CeilingResult> {
  const holders = senderKeys(holderCount).map((k) => new EvmSender(k));
  const deployer = new EvmSender(keyPairFromPrivate('ec'.repeat(32)));
  const funded = [...holders.map((h) => h.address), deployer.address];
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-ceiling-'));
  const validator = randomKeyPair();
  const dev = await openChain(dir, devParams(validator, funded), validator, 1000);
  const bare = await BareVm.create(funded, true);
  const interpreter = await BareVm.create(funded, false);
  /** A block on both sides, the chain's committed; returns both timings. */
  const both = async (txs: SignedTransaction[]): Promise<[Timed & { proposal: Proposal }, Timed, Timed]> => {
    const a = await timed(() => nodeBlock(dev, txs));
    await dev.chain.commit(a.proposal);
    const typed = BareVm.decode(txs);
    const b = await timed(() => bare.run(typed));
    const typed2 = BareVm.decode(txs);
    const c = await timed(() => interpreter.run(typed2));
    if (a.gas !== b.gas || a.gas !== c.gas) throw new Error(`gas differs: node ${a.gas}, bare VM ${b.gas} / ${c.gas}`);
    return [a, b, c];
  };
  try {
    const [deploy] = await both([deployer.tx(undefined, deployData('Token', ['Ceiling', 'CEIL', 10n ** 30n]))]);
    const created = deploy.proposal.result.receipts[0]?.contractAddress;
    if (!created) throw new Error('no contract created');
    const token = to0x(created as Uint8Array);
    for (let i = 0; i < holders.length; i += 400) {
      await both(
        holders.slice(i, i + 400).map((h) => deployer.tx(token, callData('Token', 'transfer', [h.address, 1000n * E18]))),
      );
    }
    const next = (i: number) => holders[(i + 1) % holders.length].address;
    const block = () => holders.map((h, i) => h.tx(token, callData('Token', 'transfer', [next(i), 1n]), { gas: 35_000n }));
    await both(block()); // cold: JIT, caches
    const out: CeilingResult = { node: [], bare: [], interpreter: [] };
    for (let r = 0; r < rounds; r++) {
      const [a, b, c] = await both(block());
      out.node.push(a);
      out.bare.push(b);
      out.interpreter.push(c);
    }
    return out;
  } finally {
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mgas = (t: Timed, ms: number): number => Number(t.gas) / 1e6 / (ms / 1000);

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const holders = Number(process.env.BENCH_HOLDERS ?? 850);
  const load0 = loadavg()[0].toFixed(2);
  const r = await benchEvmCeiling(rounds, holders);
  const load1 = loadavg()[0].toFixed(2);
  const row = (name: string, ts: Timed[]) => {
    const wall = ts.map((t) => mgas(t, t.wallMs));
    const cpu = ts.map((t) => mgas(t, t.cpuMs));
    return `| ${name} | ${median(cpu).toFixed(1)} Mgas/s (${cpu.map((x) => x.toFixed(1)).join(' / ')}) | ${median(wall).toFixed(1)} Mgas/s (${wall.map((x) => x.toFixed(1)).join(' / ')}) | ${median(ts.map((t) => t.cpuMs)).toFixed(0)} ms |`;
  };
  const gas = r.node[0].gas;
  console.log(
    `ERC-20 transfer block: ${holders} transfers from ${holders} senders, ${(Number(gas) / 1e6).toFixed(2)}M gas; 1-min load average ${load0} -> ${load1}`,
  );
  console.log(
    '| Path | Mgas/s of CPU time (median; runs) | Mgas/s of wall time (median; runs) | CPU per block |\n|---|---|---|---|',
  );
  console.log(row('(a) node block executor (Chain.propose: execute, receipts, state root)', r.node));
  console.log(row('(b) bare @ethereumjs/vm, in-memory MerkleStateManager (runTx each, state root)', r.bare));
  console.log(row('(c) bare @ethereumjs/vm, MapStateManager (runTx each; maps, no trie, no state root)', r.interpreter));
  const cpuRate = (ts: Timed[]) => median(ts.map((t) => mgas(t, t.cpuMs)));
  console.log(
    `(a) / (b), CPU time: ${(cpuRate(r.node) / cpuRate(r.bare)).toFixed(2)}; (a) / (c): ${(cpuRate(r.node) / cpuRate(r.interpreter)).toFixed(2)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
