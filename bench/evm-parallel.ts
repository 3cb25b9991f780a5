import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Proposal } from '../ts/chain/chain.js';
import {
  closeParallelExecution,
  configureParallelExecution,
  lastParallelStats,
  type ParallelStats,
  readyWorkers,
} from '../ts/execution/index.js';
import { keyPairFromPrivate, randomKeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { to0x } from '../ts/util/hex.js';
import { type DevChain, EvmSender, callData, deployData, devParams, openChain } from './evm-fixtures.js';
import { senderKeys } from './fixtures.js';
import { runDifferential } from './parallel-blocks.js';

/**
 * Parallel execution of a block's EVM transactions (issue 27 section 3, docs/evm.md "Parallel execution"): the
 * same block proposed sequentially and in parallel (Chain.propose: execute, receipts, state root), the parallel
 * one committed; the state roots must agree. Three blocks, each transaction from its own sender:
 * - ERC-20 transfers (each sender to a recipient of its own; independent),
 * - a fully conflicting block (every transaction bumps one hot counter: ParMix.bump),
 * - tight loops (ParMix.spin(n): CPU-bound, each writing its sender's slot; independent).
 * Reported: execution and whole-proposal wall time, process CPU time (all threads: the workers' too), Mgas/s of
 * each, median of BENCH_ROUNDS warm rounds, the worker results committed / discarded, the 1-min load average.
 * Then BENCH_DIFF_BLOCKS random blocks of the differential check (bench/parallel-blocks.ts) both ways.
 *
 *   node dist/bench/evm-parallel.js     BENCH_ROUNDS (5), BENCH_WARM (8), BENCH_HOLDERS (850), BENCH_WORKERS, BENCH_MIN_TXS,
 *                                       BENCH_MAIN_SHARE, BENCH_ONLY (a workload's name, part of it), BENCH_DIFF_BLOCKS (2000),
 *                                       BENCH_AWAIT=1 (the main thread waits for every worker result: the worker's own speed)
 */

const E18 = 10n ** 18n;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Run {
  gas: bigint;
  txs: number;
  executeMs: number;
  wallMs: number;
  cpuMs: number;
  stats: ParallelStats | null;
}

async function proposeTimed(dev: DevChain, txs: readonly SignedTransaction[]): Promise<{ run: Run; p: Proposal }> {
  const before = lastParallelStats();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const p = await dev.chain.propose(txs, dev.validator, dev.chain.head.timestamp + 1);
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const after = lastParallelStats();
  if (p.result.dropped.length || p.result.deferred.length) throw new Error('the block did not take every transaction');
  if (p.result.receipts.some((r) => r.status !== 1))
    throw new Error(`a transaction of the block failed: ${p.result.receipts.findIndex((r) => r.status !== 1)} of ${txs.length}`);
  return {
    run: {
      gas: p.block.gas_used,
      txs: txs.length,
      executeMs: p.timings.executeMs,
      wallMs,
      cpuMs: (c.user + c.system) / 1000,
      stats: after !== before ? { ...(after as ParallelStats) } : null,
    },
    p,
  };
}

/**
 * One block both ways, the second one committed (the roots must agree). An untimed sequential run goes first, so
 * both measured runs find the state cache warm and the transactions' stateless checks done (as a producer's pool
 * transactions are: admission checked them), and the measured rounds alternate which way goes first (`parFirst`).
 */
async function both(
  dev: DevChain,
  txs: readonly SignedTransaction[],
  parallel: Parameters<typeof configureParallelExecution>[0],
  parFirst = false,
) {
  const way = async (on: boolean) => {
    await configureParallelExecution(on ? parallel : null);
    return proposeTimed(dev, txs);
  };
  await configureParallelExecution(null);
  dev.chain.abandon(await dev.chain.propose(txs, dev.validator, dev.chain.head.timestamp + 1));
  const first = await way(parFirst);
  dev.chain.abandon(first.p);
  const second = await way(!parFirst);
  if (!first.p.block.state_root || first.p.block.state_root !== second.p.block.state_root)
    throw new Error(`state roots differ: ${first.p.block.state_root} vs ${second.p.block.state_root}`);
  await dev.chain.commit(second.p);
  const [seq, par] = parFirst ? [second, first] : [first, second];
  return { seq: seq.run, par: par.run, p: second.p };
}

export async function benchEvmParallel(
  rounds: number,
  warm: number,
  holderCount: number,
  parallel: Parameters<typeof configureParallelExecution>[0],
) {
  const holders = senderKeys(holderCount).map((k) => new EvmSender(k));
  const deployer = new EvmSender(keyPairFromPrivate('ec'.repeat(32)));
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-parallel-'));
  const validator = randomKeyPair();
  const dev = await openChain(dir, devParams(validator, [...holders.map((h) => h.address), deployer.address]), validator, 1000);
  await configureParallelExecution(parallel);
  const loaded = Date.now() + 60_000;
  while (readyWorkers() === 0 && Date.now() < loaded) await new Promise((r) => setTimeout(r, 20));
  try {
    const setup = await both(
      dev,
      [
        deployer.tx(undefined, deployData('Token', ['Par', 'PAR', 10n ** 30n])),
        deployer.tx(undefined, deployData('ParMix')),
        // The loops' own instance: the counter's conflicts make its contract hot (docs/evm.md), not the loops'.
        deployer.tx(undefined, deployData('ParMix')),
      ],
      parallel,
    );
    const [token, mix, loops] = setup.p.result.receipts.map((r) => to0x(r.contractAddress as Uint8Array));
    // Each sender pays a recipient of its own that sends nothing: no transaction reads what another writes. The
    // recipients hold tokens already, so every transfer writes two nonzero balances (the same gas each round).
    const recipient = (i: number) => `0x${'7e'.repeat(18)}${(i + 1).toString(16).padStart(4, '0')}`;
    for (let i = 0; i < holders.length; i += 400) {
      await both(
        dev,
        holders.slice(i, i + 400).map((_, j) => deployer.tx(token, callData('Token', 'transfer', [recipient(i + j), 1n]))),
        parallel,
      );
    }
    for (let i = 0; i < holders.length; i += 400) {
      await both(
        dev,
        holders.slice(i, i + 400).map((h) => deployer.tx(token, callData('Token', 'transfer', [h.address, 1000n * E18]))),
        parallel,
      );
    }
    const workloads: Record<string, () => SignedTransaction[]> = {
      'ERC-20 transfers (independent)': () =>
        holders.map((h, i) => h.tx(token, callData('Token', 'transfer', [recipient(i), 1n]), { gas: 35_000n })),
      'hot counter (fully conflicting)': () =>
        holders.slice(0, 480).map((h) => h.tx(mix, callData('ParMix', 'bump'), { gas: 60_000n })),
      'tight loop (independent)': () =>
        holders.slice(0, 90).map((h) => h.tx(loops, callData('ParMix', 'spin', [1_000n]), { gas: 300_000n })),
    };
    const out: Record<string, { seq: Run[]; par: Run[] }> = {};
    const only = process.env.BENCH_ONLY;
    for (const [name, block] of Object.entries(workloads)) {
      if (only && !name.toLowerCase().includes(only.toLowerCase())) continue;
      // Cold: the JIT (the workers' too: a node's workers run block after block), the learned read sets.
      for (let w = 0; w < warm; w++) await both(dev, block(), parallel);
      out[name] = { seq: [], par: [] };
      for (let r = 0; r < rounds; r++) {
        const { seq, par } = await both(dev, block(), parallel, r % 2 === 1);
        out[name].seq.push(seq);
        out[name].par.push(par);
      }
    }
    return out;
  } finally {
    await configureParallelExecution(null);
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mgas = (r: Run, ms: number): number => Number(r.gas) / 1e3 / ms;

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const holders = Number(process.env.BENCH_HOLDERS ?? 850);
  const parallel = {
    ...(process.env.BENCH_WORKERS ? { workers: Number(process.env.BENCH_WORKERS) } : {}),
    minTxs: Number(process.env.BENCH_MIN_TXS ?? 64),
    ...(process.env.BENCH_MAIN_SHARE ? { mainShare: Number(process.env.BENCH_MAIN_SHARE) } : {}),
    // Diagnosis: the main thread waits for each worker result (the worker's own speed, uncontended).
    ...(process.env.BENCH_AWAIT ? { awaitWorkers: true } : {}),
  };
  const load0 = loadavg()[0].toFixed(2);
  const warm = Number(process.env.BENCH_WARM ?? 8);
  const r = await benchEvmParallel(rounds, warm, holders, parallel);
  const load1 = loadavg()[0].toFixed(2);
  console.log(
    `parallel options ${JSON.stringify(parallel)}; ${warm} warm-up blocks each; 1-min load average ${load0} -> ${load1}`,
  );
  console.log(
    '| Block | Way | Mgas/s, execution wall (median; runs) | Mgas/s, propose wall | CPU per block (all threads) | worker results committed / conflicts / misses / late | main thread: shares handed out, results taken (ms per block) | µs per EVM transaction: main thread (sequential), worker |\n|---|---|---|---|---|---|---|---|',
  );
  for (const [name, { seq, par }] of Object.entries(r)) {
    for (const [way, runs] of [
      ['sequential', seq],
      ['parallel', par],
    ] as const) {
      const ex = runs.map((x) => mgas(x, x.executeMs));
      const st = runs.map((x) => x.stats);
      const sum = (k: keyof ParallelStats) => st.reduce((a, s) => a + Number(s?.[k] ?? 0), 0);
      console.log(
        `| ${name}, ${(Number(runs[0].gas) / 1e6).toFixed(1)}M gas | ${way} | ${median(ex).toFixed(1)} (${ex.map((x) => x.toFixed(1)).join(' / ')}) | ${median(runs.map((x) => mgas(x, x.wallMs))).toFixed(1)} | ${median(runs.map((x) => x.cpuMs)).toFixed(0)} ms | ${way === 'sequential' ? ' | ' : `${sum('committed')} / ${sum('conflicts')} / ${sum('misses')} / ${sum('late')}${sum('abandoned') ? `; ${sum('abandoned')} of ${runs.length} blocks abandoned` : ''} | ${(sum('startMs') / runs.length).toFixed(1)}, ${(sum('takeMs') / runs.length).toFixed(1)}`} | ${way === 'sequential' ? median(runs.map((x) => (x.executeMs * 1000) / x.txs)).toFixed(0) : ((sum('workerMs') * 1000) / Math.max(1, sum('workerRan'))).toFixed(0)} |`,
      );
    }
    // Paired rounds, the order alternating (the second run of a block finds the state cache warm): their ratios' geometric mean.
    const ratios = par.map((x, i) => mgas(x, x.executeMs) / mgas(seq[i], seq[i].executeMs));
    const paired = Math.exp(ratios.reduce((a, x) => a + Math.log(x), 0) / ratios.length);
    console.log(
      `|  | parallel / sequential, execution: paired rounds' geometric mean | ${paired.toFixed(2)}× (${ratios.map((x) => x.toFixed(2)).join(' / ')}) | | | | | |`,
    );
  }
  const diffBlocks = Number(process.env.BENCH_DIFF_BLOCKS ?? 2000);
  if (diffBlocks > 0) {
    const t0 = performance.now();
    const s = await runDifferential({
      seed: 2027,
      blocks: diffBlocks,
      maxTxs: 60,
      parallel: { ...parallel, minTxs: 2 },
      awaitEvery: 3,
    });
    console.log(
      `differential: ${s.blocks} random blocks, ${s.txs} transactions, identical both ways (producer and importer) in ${((performance.now() - t0) / 1000).toFixed(0)} s; worker results committed ${s.committed}, conflicts ${s.conflicts}, misses ${s.misses}, late ${s.late}`,
    );
  }
  await closeParallelExecution();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
