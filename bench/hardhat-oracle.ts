/**
 * Wall time of the Hardhat oracle (Hardhat 2's sample project, test/external/hardhat-project.ts) against our
 * dev node (automine) and against the Hardhat node, side by side in the same run: `npm run build && node
 * dist/bench/hardhat-oracle.js [rounds]` prints Markdown rows for bench/RESULTS.md. Each round runs the
 * unmodified `npx hardhat test` three ways, in turn: `--network native` on `--dev --block-time-ms 0`, the
 * same network pointed at `hardhat node` (HTTP, like ours), and Hardhat's in-process network. The project is
 * compiled once first, so the times are the suite (process start, provider setup, tests), not the compiler.
 * `--baseline <main.js>` adds another build of our node (e.g. main's, built in a checkout of it) as a fourth run
 * of each round, for a before/after in the same run.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HARDHAT_BIN,
  type HardhatRun,
  hardhat,
  prepareSampleProject,
  sampleProjectInstalled,
} from '../test/external/hardhat-project.js';
import { type Server, processCpuMs, startHardhat, startNative, stopServer } from './http-load-procs.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

function checked(run: HardhatRun, what: string): number {
  if (run.code !== 0 || !/\b9 passing\b/.test(run.stdout)) {
    throw new Error(`${what}: the suite did not pass\n${run.stdout}\n${run.stderr}`);
  }
  return run.ms;
}

/**
 * The suite's wall time, and the CPU the server process used meanwhile (a figure the machine's load moves far
 * less). `url`: where the suite sends its requests, when not straight to the server (a recording proxy).
 */
export async function suiteOn(
  dir: string,
  server: Server,
  chainId: number,
  url = `http://127.0.0.1:${server.port}`,
): Promise<{ ms: number; cpuMs?: number }> {
  const cpu0 = processCpuMs(server.child.pid);
  const run = await hardhat(
    dir,
    ['test', '--network', 'native'],
    { NATIVE_RPC_URL: url, NATIVE_CHAIN_ID: String(chainId) },
    300_000,
  );
  const cpu1 = processCpuMs(server.child.pid);
  return { ms: checked(run, server.name), cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

/** A node launched from another build (its dist/ts/node/main.js), same flags. */
async function runOurs(dir: string, main?: string): Promise<{ ms: number; cpuMs?: number }> {
  const data = mkdtempSync(join(tmpdir(), 'native-bench-hardhat-node-'));
  const native = await startNative('uws', data, ['--block-time-ms', '0', '--anvil-compat'], main);
  try {
    return await suiteOn(dir, native, 7120);
  } finally {
    await stopServer(native.child);
    rmSync(data, { recursive: true, force: true });
  }
}

export async function benchHardhatOracle(rounds = 3, baseline?: string): Promise<string[]> {
  if (!sampleProjectInstalled()) throw new Error('test/external/hardhat-sample is not installed: run scripts/setup.sh');
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-hardhat-'));
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  try {
    prepareSampleProject(dir);
    const compile = await hardhat(dir, ['compile'], {}, 300_000);
    if (compile.code !== 0) throw new Error(`hardhat compile failed\n${compile.stdout}\n${compile.stderr}`);
    const times = { native: [] as number[], node: [] as number[], inProcess: [] as number[], baseline: [] as number[] };
    const cpu = { native: [] as number[], node: [] as number[], baseline: [] as number[] };
    const record = (k: 'native' | 'node' | 'baseline', r: { ms: number; cpuMs?: number }) => {
      times[k].push(r.ms);
      if (r.cpuMs !== undefined) cpu[k].push(r.cpuMs);
    };
    for (let r = 0; r < rounds; r++) {
      record('native', await runOurs(dir));
      const node = await startHardhat({ project: dir, cli: HARDHAT_BIN });
      try {
        record('node', await suiteOn(dir, node, 31337));
      } finally {
        await stopServer(node.child);
      }
      times.inProcess.push(checked(await hardhat(dir, ['test'], {}, 300_000), 'in-process Hardhat network'));
      if (baseline) record('baseline', await runOurs(dir, baseline));
    }
    const range = (xs: number[]) => `${secs(Math.min(...xs))}–${secs(Math.max(...xs))}`;
    const ratio = median(times.native) / median(times.node);
    // Each round runs both back to back: the ratio within a round is less moved by a load that drifts between rounds.
    const perRound = median(times.native.map((t, i) => t / times.node[i]));
    const cpuCell = (xs: number[]) => (xs.length ? `${median(xs)} ms` : 'n/a');
    const goal =
      ratio <= 1
        ? 'goal (no slower than the Hardhat node) met'
        : `goal (no slower than the Hardhat node) missed: ${ratio.toFixed(2)}x`;
    const ours = `| our node, \`--dev --block-time-ms 0 --anvil-compat\` (HTTP) | ${secs(median(times.native))} | ${range(times.native)} | ${cpuCell(cpu.native)} | ${rounds} rounds; ${goal}; median of per-round ratios ${perRound.toFixed(2)}x |`;
    const after = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    return [
      `- Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run build && node dist/bench/hardhat-oracle.js ${rounds}\`; load average before: ${load}, after: ${after}; ${execSync('nproc').toString().trim()} cores.`,
      '',
      '| `npx hardhat test` of the sample project (9 tests) | Wall time (median of rounds) | Range | Server CPU during the suite (median) | Notes |',
      '| --- | --- | --- | --- | --- |',
      ours,
      `| \`hardhat node\` 2.29.1 (HTTP) | ${secs(median(times.node))} | ${range(times.node)} | ${cpuCell(cpu.node)} | same project, network \`native\` pointed at it |`,
      `| Hardhat's in-process network | ${secs(median(times.inProcess))} | ${range(times.inProcess)} | (in the test process) | no HTTP; for reference |`,
      ...(baseline
        ? [
            `| baseline build of our node (\`${baseline}\`) | ${secs(median(times.baseline))} | ${range(times.baseline)} | ${cpuCell(cpu.baseline)} | same flags; the build before this change |`,
          ]
        : []),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--baseline');
  const rows = await benchHardhatOracle(Number(process.argv[2] ?? 3), at > 0 ? process.argv[at + 1] : undefined);
  console.log(rows.join('\n'));
}
