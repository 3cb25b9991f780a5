import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ensurePeers,
  type Server,
  startGanache,
  startHardhat,
  startBare,
  startNative,
  stopAll,
  stopServer,
} from './http-load-procs.js';
import { type Cell, type Run, type Workload, fmtInt, fmtMs, render } from './http-load-render.js';
import { type SubmitPlan, type SubmitRuns, renderSubmission, submitRound } from './http-load-submit.js';
import { type CpuTimes, canPin, groupCpuTimes, pinGroup } from './proc-cpu.js';
import { RESULTS_FILE, writeResultsSection } from './results-file.js';
import { findWrk, runWrk, type WrkOptions, writePostScript } from './wrk.js';

/**
 * HTTP load on loopback with wrk: our node on both HTTP backends side by side with ganache and
 * `hardhat node`. All servers start first (idle ones cost nothing measurable), then each workload is
 * measured on every server in turn, so the columns of a row are taken close together in time. Each
 * measurement also reads the server's CPU time (/proc) before and after, for its CPU per request.
 * Workload `submit` adds HTTP submit -> inclusion to each round (bench/http-load-submit.ts).
 *
 * Env: BENCH_HTTP_SECS (5), BENCH_HTTP_WARMUP_SECS (1), BENCH_HTTP_CONNECTIONS (32), BENCH_HTTP_ROUNDS
 * (1; N = median of N interleaved rounds), BENCH_HTTP_TARGETS (uws,node,ganache,hardhat,bare), BENCH_HTTP_WORKLOADS
 * (blockNumber,getBalance,rest,batch,submit), BENCH_HTTP_PIN=1 (servers on CPU 0, wrk on CPU 1, with taskset),
 * BENCH_SUBMIT_PER_SENDER (160 native transfers from each of 64 senders), BENCH_SUBMIT_ETH_PER_SENDER (20 EIP-1559
 * transfers each, to ganache and to our node),
 * BENCH_SKIP_PEERS=1, BENCH_NODE_ARGS (node flags for our node, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_BASELINE (a built earlier checkout, scripts/bench-baseline.sh:
 * its node runs as `native [uws] before`, measured in the same rounds), BENCH_HTTP_WRITE=1 (replace the sections
 * "HTTP load vs peers" and "End-to-end HTTP submission" of bench/RESULTS.md).
 */

/** The node of a baseline build (BENCH_BASELINE), or undefined. */
export function baselineMain(): string | undefined {
  const dir = process.env.BENCH_BASELINE;
  return dir ? resolve(dir, 'dist/ts/node/main.js') : undefined;
}

export const FUNDED = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BATCH = 100;

const rpc = (id: number, method: string, params: unknown[]) => ({ jsonrpc: '2.0', id, method, params });
const isHex = (v: unknown) => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v);
const rpcOk = (j: any) => (isHex(j?.result) ? undefined : `bad answer: ${JSON.stringify(j).slice(0, 120)}`);

const WORKLOADS: Workload[] = [
  {
    key: 'blockNumber',
    label: 'JSON-RPC eth_blockNumber',
    path: (s) => s.rpcPath,
    bare: true,
    body: JSON.stringify(rpc(1, 'eth_blockNumber', [])),
    check: rpcOk,
  },
  {
    key: 'getBalance',
    label: 'JSON-RPC eth_getBalance (funded account, latest)',
    path: (s) => s.rpcPath,
    body: JSON.stringify(rpc(1, 'eth_getBalance', [FUNDED, 'latest'])),
    check: rpcOk,
  },
  {
    key: 'rest',
    label: `REST GET /accounts/{a}/balance`,
    path: (s) => (s.kind === 'native' ? `/accounts/${FUNDED}/balance` : undefined),
    check: (j) => (j?.balance !== undefined ? undefined : `bad answer: ${JSON.stringify(j).slice(0, 120)}`),
  },
  {
    key: 'batch',
    label: `JSON-RPC batch of ${BATCH} eth_getBalance (1 request = ${BATCH} calls)`,
    path: (s) => s.rpcPath,
    body: JSON.stringify(Array.from({ length: BATCH }, (_, i) => rpc(i + 1, 'eth_getBalance', [FUNDED, 'latest']))),
    callsPerRequest: BATCH,
    check: (j) =>
      Array.isArray(j) && j.length === BATCH && j.every((x) => rpcOk(x) === undefined)
        ? undefined
        : `bad batch answer: ${JSON.stringify(j).slice(0, 120)}`,
  },
];

/** The run with the median req/s (the lower middle one for an even count). */
function medianRun(runs: Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export interface HttpLoadResult {
  /** Markdown lines of the section (table, goals, caveats). */
  md: string[];
  /** Markdown of the submit -> inclusion part (workload `submit`); empty when it did not run. */
  submission: string[];
}

const envNum = (name: string, dflt: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
};

/** One request with fetch to check the answer before loading the server with it. */
async function probe(s: Server, w: Workload, path: string): Promise<string | undefined> {
  try {
    const r = await fetch(`http://127.0.0.1:${s.port}${path}`, {
      method: w.body ? 'POST' : 'GET',
      headers: w.body ? { 'content-type': 'application/json' } : {},
      body: w.body,
      signal: AbortSignal.timeout(10_000),
    });
    if (r.status !== 200) return `HTTP ${r.status}`;
    return w.check(JSON.parse(await r.text()));
  } catch (e) {
    return (e as Error).message;
  }
}

/** CPU times of a server's process group; undefined where /proc is missing. */
function serverCpu(s: Server): CpuTimes | undefined {
  try {
    return s.child.pid === undefined ? undefined : groupCpuTimes(s.child.pid);
  } catch {
    return undefined;
  }
}

/** One measurement: warm-up, then the timed wrk run with the server's CPU read around it. */
async function measure(wrk: string, s: Server, w: Workload, path: string, o: WrkOptions, warmup: number): Promise<Run> {
  const url = `http://127.0.0.1:${s.port}${path}`;
  // after each wrk run, one more request waits behind what the server still has queued (slow
  // peers keep working on dropped batches), so no backlog spills into the next measurement
  await runWrk(wrk, url, { ...o, seconds: warmup }).catch(() => undefined);
  await probe(s, w, path);
  const cpu0 = serverCpu(s);
  try {
    const r: Run = await runWrk(wrk, url, o);
    const cpu1 = serverCpu(s);
    if (cpu0 !== undefined && cpu1 !== undefined && r.requests > 0) {
      r.sysUs = ((cpu1.system - cpu0.system) * 1e6) / r.requests;
      r.cpuUs = ((cpu1.user - cpu0.user) * 1e6) / r.requests + r.sysUs;
    }
    return r;
  } finally {
    await probe(s, w, path);
  }
}

export async function benchHttpLoad(log: (s: string) => void = () => {}): Promise<HttpLoadResult> {
  const seconds = envNum('BENCH_HTTP_SECS', 5);
  const warmup = envNum('BENCH_HTTP_WARMUP_SECS', 1);
  const connections = envNum('BENCH_HTTP_CONNECTIONS', 32);
  const rounds = Math.floor(envNum('BENCH_HTTP_ROUNDS', 1));
  const targets = (process.env.BENCH_HTTP_TARGETS ?? 'uws,node,ganache,hardhat,bare').split(',').map((t) => t.trim());
  const only = process.env.BENCH_HTTP_WORKLOADS?.split(',').map((k) => k.trim());
  const workloads = WORKLOADS.filter((w) => !only || only.includes(w.key));
  const withSubmit = !only || only.includes('submit');
  const pinned = process.env.BENCH_HTTP_PIN === '1' && canPin() ? { server: '0', wrk: '1' } : undefined;
  const opts: WrkOptions = { seconds, threads: 1, connections, timeoutSecs: 10, cpus: pinned?.wrk };
  const wrkCmd = `${pinned ? `taskset -c ${pinned.wrk} ` : ''}wrk -t1 -c${connections} -d${seconds}s --timeout 10s --latency [-s post.lua] <url>`;
  const notes: string[] = [];
  if (process.env.BENCH_HTTP_PIN === '1' && !pinned)
    notes.push('BENCH_HTTP_PIN=1 asked, but taskset is not usable here: not pinned');
  const wrk = findWrk();
  if (!wrk) {
    return { md: ['wrk is not installed (`scripts/setup.sh` installs it with apt); section skipped.', ''], submission: [] };
  }
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-load-'));
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping servers`);
    stopAll().finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const servers: Server[] = [];
  const loads: number[] = [];
  try {
    const wantPeers = targets.includes('ganache') || targets.includes('hardhat') || withSubmit;
    const peersMissing = wantPeers ? await ensurePeers(log) : undefined;
    if (peersMissing) notes.push(peersMissing);
    const starts: Promise<Server>[] = [];
    const before = baselineMain();
    for (const t of targets) {
      if (t === 'uws' || t === 'node') starts.push(startNative(t, join(dir, t)));
      if (t === 'uws' && before) starts.push(startNative('uws', join(dir, 'before'), [], before, 'native [uws] before'));
      else if (t === 'bare') starts.push(startBare('uws'), startBare('node'));
      else if (!peersMissing && t === 'ganache') starts.push(startGanache());
      else if (!peersMissing && t === 'hardhat') starts.push(startHardhat());
    }
    log(`starting ${targets.join(', ')} ...`);
    for (const s of await Promise.allSettled(starts)) {
      if (s.status === 'fulfilled') servers.push(s.value);
      else notes.push(`could not start: ${(s.reason as Error).message}`);
    }
    if (pinned) for (const s of servers) if (s.child.pid !== undefined) pinGroup(s.child.pid, pinned.server);
    const scripts = new Map(workloads.map((w) => [w.key, w.body ? writePostScript(dir, w.key, w.body) : undefined]));
    const cells = new Map<string, Cell>();
    const runs = new Map<string, Run[]>();
    const plan: SubmitPlan = {
      before,
      ganache: !peersMissing && targets.includes('ganache'),
      lanes: 64,
      perSender: Math.floor(envNum('BENCH_SUBMIT_PER_SENDER', 160)),
      ethPerSender: Math.floor(envNum('BENCH_SUBMIT_ETH_PER_SENDER', 20)),
    };
    const submitted: SubmitRuns = new Map();
    for (let round = 1; round <= rounds; round++) {
      loads.push(loadavg()[0]);
      log(`round ${round}: 1-min load ${loads[loads.length - 1].toFixed(2)}`);
      for (const w of workloads) {
        for (const s of servers) {
          const path = s.kind === 'bare' && !w.bare ? undefined : w.path(s);
          if (path === undefined) continue;
          const id = `${w.key}|${s.name}`;
          const prev = cells.get(id);
          if (prev && 'error' in prev) continue;
          if (!prev) {
            const bad = await probe(s, w, path);
            if (bad) {
              cells.set(id, { error: bad });
              continue;
            }
          }
          try {
            const r = await measure(wrk, s, w, path, { ...opts, script: scripts.get(w.key) }, warmup);
            const errs = [r.non2xx && `${fmtInt(r.non2xx)} non-2xx`, r.socketErrors && `${fmtInt(r.socketErrors)} socket errors`];
            const all = [...(runs.get(id) ?? []), r];
            runs.set(id, all);
            const note = [prev && 'r' in prev ? prev.note : undefined, errs.filter(Boolean).join(', ')]
              .filter(Boolean)
              .join(', ');
            // The median of the rounds so far (noisy shared machine: not the best one).
            const cpu = all.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs]));
            const sys = all.flatMap((x) => (x.sysUs === undefined ? [] : [x.sysUs]));
            cells.set(id, { r: medianRun(all), all: all.map((x) => x.rps), cpu, sys, note: note || undefined });
            const cpuNote = r.cpuUs === undefined ? '' : `, ${r.cpuUs.toFixed(2)} µs CPU/request (system ${r.sysUs?.toFixed(2)})`;
            log(
              `${rounds > 1 ? `round ${round}: ` : ''}${w.key} on ${s.name}: ${fmtInt(r.rps)} req/s, p99 ${fmtMs(r.p99Ms)} ms${cpuNote}`,
            );
          } catch (e) {
            if (!prev) cells.set(id, { error: (e as Error).message.slice(0, 160) });
          }
        }
      }
      if (withSubmit) await submitRound(submitted, plan, round, log);
    }
    loads.push(loadavg()[0]);
    return {
      md: render(servers, cells, workloads, { seconds, warmup, connections, rounds, wrkCmd, notes, loads, pinned }),
      submission: renderSubmission(submitted, plan),
    };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.all(servers.map((s) => stopServer(s.child)));
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Date (the run's start), machine and command lines heading the sections a standalone run writes. */
function runHeader(started: Date): string[] {
  const cpu = cpus();
  const dir = process.env.BENCH_BASELINE;
  let commit = '';
  try {
    if (dir) commit = ` ${readFileSync(resolve(dir, 'BASELINE_COMMIT'), 'utf8').trim()}`;
  } catch {}
  const env = ['BENCH_BASELINE', 'BENCH_HTTP_ROUNDS', 'BENCH_HTTP_PIN', 'BENCH_HTTP_TARGETS', 'BENCH_HTTP_WORKLOADS']
    .filter((k) => process.env[k])
    .map((k) => `${k}=${process.env[k]} `)
    .join('');
  return [
    `- Date: ${started.toISOString()} (start); machine: ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}; shared with other engineers' work.`,
    `- Command: \`${env}node dist/bench/http-load.js\` (bench/http-load.ts; \`npm run bench:http\` builds first)` +
      (dir ? `; "before": the build of${commit} (scripts/bench-baseline.sh), measured in the same rounds.` : '.'),
    '',
  ];
}

const LOAD_SECTION = '## HTTP load vs peers';
const SUBMIT_SECTION = '## End-to-end HTTP submission';

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = new Date();
  benchHttpLoad((s) => process.stderr.write(`${s}\n`)).then(
    (r) => {
      const head = runHeader(started);
      const load = [LOAD_SECTION, '', ...head, ...r.md];
      const submit = [SUBMIT_SECTION, '', ...head, '(From the same run as "HTTP load vs peers".)', '', ...r.submission];
      process.stdout.write(`${load.join('\n')}\n`);
      if (r.submission.length) process.stdout.write(`${submit.join('\n')}\n`);
      // BENCH_HTTP_WRITE=1: the two sections of bench/RESULTS.md are replaced (a partial run prints only).
      if (process.env.BENCH_HTTP_WRITE === '1') {
        writeResultsSection(LOAD_SECTION, load);
        if (r.submission.length) writeResultsSection(SUBMIT_SECTION, submit);
        process.stderr.write(`wrote ${RESULTS_FILE}\n`);
      }
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
