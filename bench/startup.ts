/**
 * Start-up time (issue 25, section 3), side by side with an earlier build: `--version` until the process exits,
 * a fresh `--dev` chain from the command to the first 200 of GET /health, and a restart of a dev chain of a few
 * thousand blocks (stopped cleanly) to /health, each the median of `--runs` (default 5), every run its own
 * process; the CPU the node used until /health (from /proc) is the figure a loaded machine does not distort.
 * The earlier build: `scripts/bench-baseline.sh <commit>`, then BENCH_BASELINE=.tmp/baseline.
 *
 *   BENCH_BASELINE=.tmp/baseline npm run bench:startup -- [--runs 5] [--blocks 3000]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** This checkout (the repository root above dist/bench). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEADLINE_MS = 60_000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** A build of the node to measure: its main.js and a label. */
interface Build {
  label: string;
  main: string;
}

/** The earlier build of BENCH_BASELINE (scripts/bench-baseline.sh <commit> builds one), if set. */
function baselineBuild(): Build | undefined {
  const dir = process.env.BENCH_BASELINE;
  if (!dir) return undefined;
  let commit = dir;
  try {
    commit = readFileSync(join(dir, 'BASELINE_COMMIT'), 'utf8').trim();
  } catch {
    /* a checkout built by hand: named by its directory */
  }
  return { label: `before (${commit})`, main: resolve(dir, 'dist/ts/node/main.js') };
}

/** Milliseconds from spawning `node main.js args` until it exits (code 0 expected). */
function timeExit(main: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [main, ...args], { stdio: 'ignore' });
  return new Promise((ok, fail) =>
    child.once('exit', (code) => (code === 0 ? ok(performance.now() - t0) : fail(new Error(`${args.join(' ')} exited ${code}`)))),
  );
}

function healthOk(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', timeout: 2_000 }, (res) => {
      res.resume();
      ok(res.statusCode === 200);
    });
    req.once('error', () => ok(false));
    req.once('timeout', () => req.destroy());
    req.end();
  });
}

async function rpc(port: number, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** A port nobody listens on now (bound and released). */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

interface Started {
  child: ChildProcess;
  port: number;
  /** Command to the first 200 of /health. */
  ms: number;
  /** CPU the node used by then (all its threads; /proc, 10 ms ticks): what the start costs whatever the load. */
  cpuMs: number;
}

/** User + system CPU of a process so far (Linux /proc/PID/stat, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Start a dev node on `dataDir` and time it from the spawn to /health answering 200. */
async function startDev(main: string, dataDir: string): Promise<Started> {
  const [port, grpcPort] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [main, '--dev', '--port', String(port), '--grpc-port', String(grpcPort), '--data-dir', dataDir, '--log-level', 'warn'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (;;) {
    if (await healthOk(port)) {
      const ms = performance.now() - t0;
      return { child, port, ms, cpuMs: cpuMsOf(child.pid as number) };
    }
    if (exited) throw new Error(`the node on ${dataDir} exited before /health answered`);
    if (performance.now() - t0 > DEADLINE_MS) throw new Error(`no /health within ${DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** SIGTERM (a clean stop: the trie checkpoint is written) and wait for the exit. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    child.once('exit', () => ok());
    child.kill('SIGTERM');
  });
}

interface Measured {
  version: number[];
  fresh: number[];
  restart: number[];
  freshCpu: number[];
  restartCpu: number[];
  height: number;
}

async function measure(build: Build, runs: number, blocks: number, dir: string): Promise<Measured> {
  const out: Measured = { version: [], fresh: [], restart: [], freshCpu: [], restartCpu: [], height: 0 };
  for (let i = 0; i < runs; i++) out.version.push(await timeExit(build.main, ['--version']));
  for (let i = 0; i < runs; i++) {
    const n = await startDev(build.main, join(dir, `fresh-${i}`));
    out.fresh.push(n.ms);
    out.freshCpu.push(n.cpuMs);
    await stop(n.child);
  }
  // A dev chain of `blocks` blocks, a few transfers among them, stopped cleanly; then restarted `runs` times.
  const chainDir = join(dir, 'chain');
  const first = await startDev(build.main, chainDir);
  const accounts = (await rpc(first.port, 'eth_accounts', [])) as string[];
  for (let i = 0; i < 20; i++) {
    await rpc(first.port, 'eth_sendTransaction', [{ from: accounts[0], to: accounts[1], value: '0x1' }]);
    await rpc(first.port, 'hardhat_mine', [`0x${Math.floor(blocks / 20).toString(16)}`]);
  }
  out.height = Number(await rpc(first.port, 'eth_blockNumber', []));
  await stop(first.child);
  for (let i = 0; i < runs; i++) {
    const n = await startDev(build.main, chainDir);
    out.restart.push(n.ms);
    out.restartCpu.push(n.cpuMs);
    await stop(n.child);
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      blocks: { type: 'string', default: '3000' },
    },
  });
  const runs = Number(values.runs);
  const blocks = Number(values.blocks);
  const builds: Build[] = [];
  const before = baselineBuild();
  if (before) builds.push(before);
  builds.push({ label: 'this build', main: join(ROOT, 'dist/ts/node/main.js') });
  const load0 = loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');
  const results = new Map<string, Measured>();
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-startup-'));
  try {
    for (const b of builds) {
      log(`measuring ${b.label} ...`);
      results.set(b.label, await measure(b, runs, blocks, join(dir, String(results.size))));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const load1 = loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');
  const ms = (xs: number[]) => `${Math.round(median(xs))} ms`;
  const span = (xs: number[]) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
  const rows = [
    ['`--version` until exit', (m: Measured) => m.version, 'target ≤ 200 ms'],
    ['fresh `--dev` to /health 200', (m: Measured) => m.fresh, 'target ≤ 1 s (quiet machine)'],
    ['restart of a dev chain to /health 200', (m: Measured) => m.restart, 'target ≤ 1 s (quiet machine)'],
    ['CPU of the node until /health (fresh)', (m: Measured) => m.freshCpu, 'user + system, all threads (/proc)'],
    ['CPU of the node until /health (restart)', (m: Measured) => m.restartCpu, 'user + system, all threads (/proc)'],
  ] as const;
  const lines = [
    `| Measurement | ${builds.map((b) => `${b.label}: median (min–max)`).join(' | ')} | Notes |`,
    `| --- | ${builds.map(() => '---').join(' | ')} | --- |`,
    ...rows.map(
      ([name, pick, note]) =>
        `| ${name} | ${builds.map((b) => `${ms(pick(results.get(b.label) as Measured))} (${span(pick(results.get(b.label) as Measured))})`).join(' | ')} | ${note} |`,
    ),
  ];
  const heights = builds.map((b) => `${b.label}: ${results.get(b.label)?.height}`).join(', ');
  const summary = [
    `- Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench:startup -- ${process.argv.slice(2).join(' ')}\`.`,
    `  Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. 1-min / 5-min / 15-min load`,
    `  average ${load0} before, ${load1} after (shared machine). ${runs} runs per row, each its own process;`,
    `  restart rows on a dev chain of ${heights} blocks stopped with SIGTERM.`,
  ];
  process.stdout.write(`${[...summary, '', ...lines].join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
