/**
 * Builds of our node side by side on the Hardhat oracle (bench/hardhat-oracle.ts), with the Hardhat node, in the
 * same rounds: `npm run build && node dist/bench/hardhat-oracle-ab.js <rounds> <name>=<dist/ts/node/main.js> ...`
 * (e.g. main's build from a checkout of it, and this one). Each round runs the sample project's suite once per
 * build and once on `hardhat node`, each on a fresh server, and records the wall time and the server's CPU split
 * into its main thread (requests, blocks) and its other threads (V8's background compiler and GC, the thread
 * pool): the split says whether a difference is on the requests' path or beside it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HARDHAT_BIN, prepareCompiledSampleProject, sampleProjectInstalled } from '../test/external/hardhat-project.js';
import { suiteOn } from './hardhat-oracle.js';
import { type Server, startHardhat, startNative, stopServer } from './http-load-procs.js';
import { threadCpuSeconds } from './proc-cpu.js';

interface ThreadCpu {
  mainMs: number;
  otherMs: number;
}

function threadCpu(pid: number): ThreadCpu {
  const { main, other } = threadCpuSeconds(pid);
  return { mainMs: Math.round(main * 1000), otherMs: Math.round(other * 1000) };
}

interface Sample extends ThreadCpu {
  ms: number;
}

async function sampleOn(dir: string, server: Server, chainId: number): Promise<Sample> {
  const pid = server.child.pid as number;
  const before = threadCpu(pid);
  const run = await suiteOn(dir, server, chainId);
  const after = threadCpu(pid);
  return { ms: run.ms, mainMs: after.mainMs - before.mainMs, otherMs: after.otherMs - before.otherMs };
}

async function onBuild(dir: string, main: string, name: string): Promise<Sample> {
  const data = mkdtempSync(join(tmpdir(), 'native-ab-hardhat-node-'));
  try {
    const server = await startNative('uws', data, ['--block-time-ms', '0', '--anvil-compat'], main, name);
    return await sampleOn(dir, server, 7120).finally(() => stopServer(server.child));
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function abHardhatOracle(rounds: number, builds: [name: string, main: string][]): Promise<string[]> {
  if (!sampleProjectInstalled()) throw new Error('test/external/hardhat-sample is not installed: run scripts/setup.sh');
  const dir = mkdtempSync(join(tmpdir(), 'native-ab-hardhat-'));
  const load = loadavg().map((l) => l.toFixed(2));
  const samples = new Map<string, Sample[]>();
  const add = (name: string, s: Sample) => samples.set(name, [...(samples.get(name) ?? []), s]);
  try {
    await prepareCompiledSampleProject(dir);
    for (let r = 0; r < rounds; r++) {
      for (const [name, main] of builds) add(name, await onBuild(dir, main, name));
      const hardhat = await startHardhat({ project: dir, cli: HARDHAT_BIN });
      add('hardhat node', await sampleOn(dir, hardhat, 31337).finally(() => stopServer(hardhat.child)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const reference = samples.get('hardhat node') as Sample[];
  const row = (name: string, xs: Sample[]) =>
    `| ${name} | ${(median(xs.map((x) => x.ms)) / 1000).toFixed(2)} s | ${median(xs.map((x, i) => x.ms / reference[i].ms)).toFixed(2)}x | ${median(xs.map((x) => x.mainMs + x.otherMs))} ms | ${median(xs.map((x) => x.mainMs))} ms | ${median(xs.map((x) => x.otherMs))} ms |`;
  return [
    `- ${new Date().toISOString()}: \`node dist/bench/hardhat-oracle-ab.js ${rounds} ${builds.map(([n, m]) => `${n}=${m}`).join(' ')}\`; load average before ${load.join(' ')}, after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; medians of ${rounds} rounds; CPU from /proc in 10 ms ticks.`,
    '',
    '| Server | Suite wall time | Per-round ratio to the Hardhat node | Server CPU | main thread | other threads |',
    '| --- | --- | --- | --- | --- | --- |',
    ...[...samples].map(([name, xs]) => row(name, xs)),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const builds = process.argv.slice(3).map((a) => {
    const at = a.indexOf('=');
    if (at <= 0) throw new Error(`expected <name>=<path to dist/ts/node/main.js>, got ${a}`);
    return [a.slice(0, at), a.slice(at + 1)] as [string, string];
  });
  console.log((await abHardhatOracle(Number(process.argv[2] ?? 5), builds)).join('\n'));
}
