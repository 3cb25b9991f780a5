import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { KeyPair } from '../ts/ledger/keys.js';
import { senderKeys } from './fixtures.js';
import { benchEthSubmission, ethTransferBodies } from './http-e2e-eth.js';
import { rawLane, startBenchChainNode } from './http-e2e.js';
import { stopServer } from './http-load-procs.js';
import { canPin, groupCpuSeconds, pinGroup, pinProcess, threadCpuSeconds } from './proc-cpu.js';

/**
 * Admission alone: server CPU per `eth_sendRawTransaction` of an EIP-1559 transfer, the node started with
 * `--role full` so that no block is produced while it admits (the CPU read around the submissions is the
 * admission's: decoding, sender recovery, hashing, pool rules, journal, answer). `BENCH_BASELINE` (a build
 * of an earlier commit, scripts/bench-baseline.sh) is measured in the same interleaved rounds. On a loaded
 * machine wall time says little: the CPU per request is the number to compare.
 *
 *   node dist/bench/evm-admission.js            BENCH_ROUNDS (5), BENCH_LANES (64), BENCH_PER_SENDER (160)
 *   BENCH_E2E=1 node dist/bench/evm-admission.js   also submit -> inclusion on a validator (BENCH_E2E_PER_SENDER, 20,
 *                                                  transfers per lane; bench/http-e2e-eth.ts:
 *                                                  its CPU per transfer includes executing them in blocks)
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node dist/bench/evm-admission.js   (profile)
 *   BENCH_PIN=1: the node on CPU 1, this process (the load generator) on CPU 0 (taskset), so that the two do not
 *                take turns on the same core and acceptance is bounded by the slower of them, not by their sum
 */

export interface AdmissionRun {
  acceptedPerSec: number;
  /** The node's CPU (every thread of its process group) per accepted transaction. */
  cpuUsPerTx: number;
  /** The node's main (JS) thread alone. */
  mainThreadUsPerTx: number;
  /** This process (the load generator). */
  clientUsPerTx: number;
}

/** CPU the node's process group and main thread, and this process, have used (seconds). */
function cpuNow(pid: number): { group: number; main: number; client: number } {
  const u = process.cpuUsage();
  return { group: groupCpuSeconds(pid), main: threadCpuSeconds(pid).main, client: (u.user + u.system) / 1e6 };
}

/** One run on a fresh node (`main`: another build's entry point). */
export async function benchEvmAdmission(bodies: string[][], keys: KeyPair[], main?: string): Promise<AdmissionRun> {
  const { server, dir } = await startBenchChainNode('uws', keys, ['--role', 'full'], main);
  try {
    const pgid = server.child.pid as number;
    if (process.env.BENCH_PIN === '1' && canPin()) pinGroup(pgid, '1');
    const cpu0 = cpuNow(pgid);
    const t0 = performance.now();
    const rs = await Promise.all(bodies.map((list) => rawLane(server.port, list, server.rpcPath)));
    const t1 = performance.now();
    const cpu1 = cpuNow(pgid);
    const refused = rs.find((r) => r.failed.length)?.failed[0];
    if (refused !== undefined) throw new Error(`${server.name} refused a transfer: ${refused}`);
    const n = rs.reduce((a, r) => a + r.ok, 0);
    const perTx = (s: number): number => (s * 1e6) / n;
    return {
      acceptedPerSec: n / ((t1 - t0) / 1000),
      cpuUsPerTx: perTx(cpu1.group - cpu0.group),
      mainThreadUsPerTx: perTx(cpu1.main - cpu0.main),
      clientUsPerTx: perTx(cpu1.client - cpu0.client),
    };
  } finally {
    await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const lanes = Number(process.env.BENCH_LANES ?? 64);
  const perSender = Number(process.env.BENCH_PER_SENDER ?? 160);
  const baseline = process.env.BENCH_BASELINE;
  const keys = senderKeys(lanes);
  const pinned = process.env.BENCH_PIN === '1' && canPin();
  if (process.env.BENCH_PIN === '1' && !pinned) console.log('BENCH_PIN=1 asked, but taskset is not usable here: not pinned');
  if (pinned) pinProcess('0');
  const bodies = ethTransferBodies(keys, perSender);
  const builds: [string, string | undefined][] = [['this build', undefined]];
  if (baseline) builds.unshift(['before', `${baseline}/dist/ts/node/main.js`]);
  const runs = new Map<string, AdmissionRun[]>(builds.map(([name]) => [name, []]));
  const e2ePerSender = Number(process.env.BENCH_E2E_PER_SENDER ?? 20);
  const e2e = new Map<string, { cpu: number; accepted: number; included: number; fullest: number; blocks: number }[]>(
    builds.map(([name]) => [name, []]),
  );
  const loads: string[] = [];
  for (let r = 0; r < rounds; r++) {
    loads.push(loadavg()[0].toFixed(2));
    for (const [name, main] of builds) {
      const run = await benchEvmAdmission(bodies, keys, main);
      runs.get(name)?.push(run);
      console.log(
        `${name} round ${r + 1}: ${fmt(run.cpuUsPerTx)} µs CPU/tx (main thread ${fmt(run.mainThreadUsPerTx)}, client ${fmt(run.clientUsPerTx)}), ${fmt(run.acceptedPerSec)} tx/s accepted`,
      );
      if (process.env.BENCH_E2E !== '1') continue;
      const x = await benchEthSubmission('native', 64, e2ePerSender, { main });
      const blocks = x.blocks ?? [];
      const fullest = Math.max(...blocks.map((b) => b.gasUsed));
      e2e.get(name)?.push({
        cpu: x.nodeCpuUs ?? Number.NaN,
        accepted: x.acceptedPerSec,
        included: x.includedPerSec,
        fullest,
        blocks: blocks.length,
      });
      console.log(
        `${name} round ${r + 1} e2e: ${fmt(x.nodeCpuUs ?? Number.NaN)} µs CPU/tx, ${fmt(x.includedPerSec)} tx/s included; blocks (txs/gas): ${blocks.map((b) => `${b.txs}/${(b.gasUsed / 1e6).toFixed(2)}M`).join(' ')}`,
      );
    }
  }
  loads.push(loadavg()[0].toFixed(2));
  console.log(`\n${lanes * perSender} EIP-1559 transfers, ${lanes} lanes; 1-min load average per round: ${loads.join(', ')}`);
  if (pinned) console.log('Pinned (taskset): the node on CPU 1, the load generator on CPU 0.');
  console.log(
    '| Build | Server CPU per tx (median) | runs | main thread (median) | client CPU per tx (median) | Accepted (median) | runs |\n|---|---|---|---|---|---|---|',
  );
  for (const [name] of builds) {
    const rs = runs.get(name) ?? [];
    const cpu = rs.map((x) => x.cpuUsPerTx);
    const acc = rs.map((x) => x.acceptedPerSec);
    const mainUs = median(rs.map((x) => x.mainThreadUsPerTx));
    const client = median(rs.map((x) => x.clientUsPerTx));
    console.log(
      `| ${name} | ${fmt(median(cpu))} µs | ${cpu.map(fmt).join(' / ')} | ${fmt(mainUs)} µs | ${fmt(client)} µs | ${fmt(median(acc))} tx/s | ${acc.map(fmt).join(' / ')} |`,
    );
  }
  if (process.env.BENCH_E2E !== '1') return;
  console.log(
    `\nSubmit -> inclusion, ${fmt(64 * e2ePerSender)} EIP-1559 transfers (bench/http-e2e-eth.ts), server CPU over the whole run:`,
  );
  console.log(
    '| Build | Server CPU per tx | runs | Accepted | Submit -> inclusion | Fullest block (median) | Blocks (median) |\n|---|---|---|---|---|---|---|',
  );
  for (const [name] of builds) {
    const xs = e2e.get(name) ?? [];
    const cpu = xs.map((x) => x.cpu);
    console.log(
      `| ${name} | ${fmt(median(cpu))} µs | ${cpu.map(fmt).join(' / ')} | ${fmt(median(xs.map((x) => x.accepted)))} tx/s | ${fmt(median(xs.map((x) => x.included)))} tx/s | ${(median(xs.map((x) => x.fullest)) / 1e6).toFixed(2)}M gas | ${median(xs.map((x) => x.blocks))} |`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
