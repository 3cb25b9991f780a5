import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TRACE_OPTIONS, TracePool, type TraceOptions } from '../ts/execution/index.js';
import { DEV_MNEMONIC, keyPairFromMnemonic, randomKeyPair } from '../ts/ledger/keys.js';
import { traceTransaction } from '../ts/services/index.js';
import { stringifyExact } from '../ts/util/json.js';
import { EvmSender, callData, deployData, devParams, openChain, produce, storedEvmTransaction } from './evm-fixtures.js';
import type { Row } from './ledger.js';

const HARDHAT_FIXTURE = fileURLToPath(new URL('../../test/fixtures/hardhat/', import.meta.url));
/**
 * Timed runs per measurement (median), after WARM untimed ones, on both sides: a serving node traces warm
 * (JIT and caches), so short traces are warmed as long as it takes the JIT to settle; the first (cold) trace of
 * each side is reported on its own. Long traces settle within a few runs.
 */
const SHORT = { warm: 50, runs: 51 };
const LONG = { warm: 3, runs: 5 };
/** Loop iterations whose default struct logs stay under the 50 MB cap (hardhat answers the same trace). */
const LOOP_SMALL = 1_000n;
/** A heavy loop (~1.6 M steps) for the call tracer, the output cap and the timeout. */
const LOOP_HEAVY = 40_000n;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perSec = (steps: number, ms: number): string => `${Math.round(steps / (ms / 1000)).toLocaleString()} steps/s`;

interface Case {
  name: string;
  raw: Uint8Array;
  txid: string;
  counts: { warm: number; runs: number };
}

/** Hardhat's in-process network: the same raw transactions, each struct-log trace timed in its process. */
function hardhatTimings(raws: Uint8Array[], traces: { hash: string }[]): Promise<{ ms: number; steps: number }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-trace-'));
  const input = join(dir, 'input.json');
  const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
  writeFileSync(
    input,
    JSON.stringify({ rawTxs: raws.map(hex), traces: traces.map((t) => ({ hash: t.hash })), timingsOnly: true }),
  );
  return new Promise((resolve, reject) => {
    execFile(
      'npx',
      ['--no', 'hardhat', 'run', '--no-compile', '--network', 'hardhat', 'scripts/trace.cjs'],
      {
        cwd: HARDHAT_FIXTURE,
        env: { ...process.env, NATIVE_TRACE_INPUT: input, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', CI: 'true' },
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (err || !line) return reject(new Error(`hardhat: ${err?.message ?? ''} ${stderr.slice(0, 500)}`));
        resolve(JSON.parse(line).traces);
      },
    );
  });
}

/**
 * Trace throughput: struct logs and callTracer on an ERC-20 transfer and a heavy loop, next to hardhat@2
 * (EDR) tracing the same signed transactions (struct logs only: hardhat has no other tracer). The node's
 * rows go through its trace pool (a worker thread reading the state by message, as `debug_trace*` runs);
 * the "in-process" rows run the same code on the calling thread, for comparison. Also the output cap on a
 * heavy loop (time to refuse, RSS growth, worker threads included) and the timeout's accuracy.
 */
export async function benchTracing(log: (s: string) => void = () => undefined): Promise<Row[]> {
  const sender = new EvmSender(keyPairFromMnemonic(DEV_MNEMONIC, 0));
  const validator = randomKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-trace-'));
  const dev = await openChain(dir, devParams(validator, [sender.address]), validator, 1000);
  const rows: Row[] = [];
  const pool = new TracePool({ onError: (err) => log(`trace worker failed: ${(err as Error).message}`) });
  try {
    const { getCreateAddress } = await import('ethers');
    const tokenAddr = getCreateAddress({ from: sender.address, nonce: 0 }).toLowerCase();
    const loopAddr = getCreateAddress({ from: sender.address, nonce: 1 }).toLowerCase();
    const raws = [
      sender.raw(undefined, deployData('Token', ['Bench', 'BEN', 10n ** 24n])),
      sender.raw(undefined, deployData('Loop')),
      sender.raw(tokenAddr, callData('Token', 'transfer', [`0x${'cd'.repeat(20)}`, 10n ** 18n])),
      sender.raw(loopAddr, callData('Loop', 'loop', [LOOP_SMALL]), { gas: 1_000_000n }),
      sender.raw(loopAddr, callData('Loop', 'loop', [LOOP_HEAVY]), { gas: 10_000_000n }),
    ];
    for (const raw of raws) await produce(dev, [storedEvmTransaction(raw, Math.floor(Date.now() / 1000))]);
    const txid = (raw: Uint8Array) => storedEvmTransaction(raw).txid;
    const cases: Case[] = [
      { name: 'ERC-20 transfer', raw: raws[2], txid: txid(raws[2]), counts: SHORT },
      { name: `loop(${LOOP_SMALL})`, raw: raws[3], txid: txid(raws[3]), counts: LONG },
    ];
    // The node's path (its trace pool) and the same code on this thread.
    const ctx = { chain: dev.chain, evmTraces: pool };
    const inProcess = { chain: dev.chain };
    const run = async (id: string, opts: TraceOptions, on: object = ctx): Promise<{ ms: number; text: string }> => {
      const t0 = performance.now();
      const result = await traceTransaction(on as typeof ctx, id, opts);
      const text = stringifyExact(result); // what the RPC layer sends: serialization included
      return { ms: performance.now() - t0, text };
    };
    const heavyId = txid(raws[4]);
    // The worker starts (a V8 isolate, the EVM's modules) before the memory baseline.
    await run(cases[0].txid, { ...DEFAULT_TRACE_OPTIONS, tracer: 'callTracer' });
    // The cap: struct logs of the heavy loop are refused once they pass 50 MB; RSS growth meanwhile.
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const t0 = performance.now();
    const refused = await traceTransaction(ctx, heavyId, { ...DEFAULT_TRACE_OPTIONS, timeoutMs: 30_000 }).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    rows.push({
      name: `struct logs, loop(${LOOP_HEAVY}), 50 MB cap [node]`,
      value: `${refused} after ${((performance.now() - t0) / 1000).toFixed(2)} s`,
      note: `peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB (before: ${(rss0 / 2 ** 20).toFixed(0)} MiB, the trace worker started), cap 50 MB`,
    });
    const steps = new Map<string, number>();
    const firstMs = new Map<string, number>();
    for (const c of cases) {
      const { warm, runs } = c.counts;
      const times: number[] = [];
      let text = '';
      for (let i = 0; i < warm; i++) {
        const r = await run(c.txid, DEFAULT_TRACE_OPTIONS);
        if (i === 0) firstMs.set(c.name, r.ms);
      }
      for (let i = 0; i < runs; i++) ({ ms: times[i], text } = await run(c.txid, DEFAULT_TRACE_OPTIONS));
      const n = text.split('"pc":').length - 1;
      steps.set(c.name, n);
      rows.push({
        name: `struct logs, ${c.name} [node]`,
        value: perSec(n, median(times)),
        note: `${n.toLocaleString()} steps, ${(text.length / 1e6).toFixed(1)} MB, ${median(times).toFixed(2)} ms, median of ${runs} after ${warm}; first trace ${firstMs.get(c.name)?.toFixed(1)} ms`,
      });
      const callTimes: number[] = [];
      const callOpts: TraceOptions = { ...DEFAULT_TRACE_OPTIONS, tracer: 'callTracer' };
      for (let i = 0; i < warm; i++) await run(c.txid, callOpts);
      for (let i = 0; i < runs; i++) callTimes[i] = (await run(c.txid, callOpts)).ms;
      rows.push({
        name: `callTracer, ${c.name} [node]`,
        value: perSec(n, median(callTimes)),
        note: `${median(callTimes).toFixed(2)} ms, median of ${runs} after ${warm}`,
      });
      log(`  ${c.name}: ${rows.at(-2)?.value}, ${rows.at(-1)?.value}`);
      const localTimes: number[] = [];
      for (let i = 0; i < warm; i++) await run(c.txid, DEFAULT_TRACE_OPTIONS, inProcess);
      for (let i = 0; i < runs; i++) localTimes[i] = (await run(c.txid, DEFAULT_TRACE_OPTIONS, inProcess)).ms;
      rows.push({
        name: `struct logs, ${c.name} [node, in-process]`,
        value: perSec(n, median(localTimes)),
        note: `${median(localTimes).toFixed(2)} ms, median of ${runs} after ${warm}: the same code on the calling thread`,
      });
    }
    const heavySteps = Number(LOOP_HEAVY) * 40;
    const heavyName = `callTracer, loop(${LOOP_HEAVY}) [node]`;
    try {
      const heavy = await run(heavyId, { ...DEFAULT_TRACE_OPTIONS, tracer: 'callTracer', timeoutMs: 30_000 });
      const note = `~${heavySteps.toLocaleString()} steps, ${(heavy.ms / 1000).toFixed(1)} s`;
      rows.push({ name: heavyName, value: perSec(heavySteps, heavy.ms), note });
    } catch (err) {
      rows.push({ name: heavyName, value: (err as Error).message, note: `~${heavySteps.toLocaleString()} steps, 30 s timeout` });
    }

    // The timeout: asked 500 ms.
    const t1 = performance.now();
    const timedOut = await traceTransaction(ctx, heavyId, {
      ...DEFAULT_TRACE_OPTIONS,
      tracer: 'callTracer',
      timeoutMs: 500,
    }).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    rows.push({
      name: 'callTracer, timeout "500ms" [node]',
      value: `${timedOut} after ${Math.round(performance.now() - t1)} ms`,
      note: 'asked 500 ms',
    });

    log('  hardhat ...');
    const hh = await hardhatTimings(
      raws,
      cases.flatMap((c) => Array.from({ length: c.counts.warm + c.counts.runs }, () => ({ hash: `0x${c.txid}` }))),
    );
    let at = 0;
    for (const c of cases) {
      const { warm, runs: n } = c.counts;
      const first = hh[at];
      const runs = hh.slice(at + warm, at + warm + n);
      at += warm + n;
      const ms = median(runs.map((r) => r.ms));
      rows.push({
        name: `struct logs, ${c.name} [hardhat@2]`,
        value: perSec(runs[0].steps, ms),
        note: `${runs[0].steps.toLocaleString()} steps (node: ${steps.get(c.name)?.toLocaleString()}), ${ms.toFixed(2)} ms, median of ${n} after ${warm}; first trace ${first.ms.toFixed(1)} ms`,
      });
    }
  } finally {
    await pool.close();
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchTracing((s) => process.stdout.write(`${s}\n`)).then(
    (rows) => {
      for (const r of rows) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
