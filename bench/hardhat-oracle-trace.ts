/**
 * Where the Hardhat oracle's time goes, method by method: `npm run build && node dist/bench/hardhat-oracle-trace.js
 * [rounds] [out.json]` runs the sample project's `npx hardhat test --network native` (bench/hardhat-oracle.ts)
 * through a recording proxy (bench/rpc-trace-proxy.ts) in front of our dev node and in front of `hardhat node`,
 * alternating, and prints per JSON-RPC method the count and the servers' summed latency (median over rounds).
 * With out.json every request of the last round of each is written there (order, method, latency, error code).
 * The proxy adds the same hop to both; the suite's wall time here is not the bench's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HARDHAT_BIN, prepareCompiledSampleProject, sampleProjectInstalled } from '../test/external/hardhat-project.js';
import { suiteOn } from './hardhat-oracle.js';
import { type Server, startHardhat, startNative, stopServer } from './http-load-procs.js';
import { type TracedRequest, startTraceProxy, totalsByMethod } from './rpc-trace-proxy.js';

const median = (xs: number[]): number => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : 0);

interface TracedRun {
  ms: number;
  cpuMs?: number;
  requests: TracedRequest[];
}

async function tracedSuite(dir: string, server: Server, chainId: number): Promise<TracedRun> {
  const proxy = await startTraceProxy(server.port, server.rpcPath);
  try {
    const run = await suiteOn(dir, server, chainId, `http://127.0.0.1:${proxy.port}`);
    return { ...run, requests: [...proxy.requests] };
  } finally {
    await proxy.close();
  }
}

/** Our dev node with the oracle bench's flags, in a data dir of its own. */
async function onOurNode(dir: string): Promise<TracedRun> {
  const data = mkdtempSync(join(tmpdir(), 'native-trace-hardhat-node-'));
  try {
    const server = await startNative('uws', data, ['--block-time-ms', '0', '--anvil-compat']);
    return await tracedSuite(dir, server, 7120).finally(() => stopServer(server.child));
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

async function onHardhatNode(dir: string): Promise<TracedRun> {
  const server = await startHardhat({ project: dir, cli: HARDHAT_BIN });
  return await tracedSuite(dir, server, 31337).finally(() => stopServer(server.child));
}

function table(ours: TracedRun[], theirs: TracedRun[]): string[] {
  const methods = new Set<string>();
  const per = (runs: TracedRun[]) => runs.map((r) => totalsByMethod(r.requests));
  const o = per(ours);
  const h = per(theirs);
  for (const m of [...o, ...h]) for (const k of m.keys()) methods.add(k);
  const cell = (maps: ReturnType<typeof per>, m: string) => {
    const count = median(maps.map((x) => x.get(m)?.count ?? 0));
    const total = median(maps.map((x) => x.get(m)?.totalMs ?? 0));
    const errors = median(maps.map((x) => x.get(m)?.errors ?? 0));
    return { count, total, errors };
  };
  const rows = [...methods].map((m) => ({ m, o: cell(o, m), h: cell(h, m) }));
  rows.sort((a, b) => b.o.total - b.h.total - (a.o.total - a.h.total));
  const fmt = (c: { count: number; total: number; errors: number }) =>
    `${c.count}${c.errors ? ` (${c.errors} err)` : ''} | ${c.total.toFixed(1)} ms | ${c.count ? (c.total / c.count).toFixed(2) : '-'} ms`;
  const sum = (runs: TracedRun[]) => median(runs.map((r) => r.requests.reduce((s, q) => s + q.ms, 0)));
  const count = (runs: TracedRun[]) => median(runs.map((r) => r.requests.length));
  return [
    '| Method | ours: count | total | mean | hardhat node: count | total | mean | difference |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.m} | ${fmt(r.o)} | ${fmt(r.h)} | ${(r.o.total - r.h.total).toFixed(1)} ms |`),
    `| all | ${count(ours)} | ${sum(ours).toFixed(1)} ms | | ${count(theirs)} | ${sum(theirs).toFixed(1)} ms | | ${(sum(ours) - sum(theirs)).toFixed(1)} ms |`,
  ];
}

export async function traceHardhatOracle(rounds: number, outFile?: string): Promise<string[]> {
  if (!sampleProjectInstalled()) throw new Error('test/external/hardhat-sample is not installed: run scripts/setup.sh');
  const dir = mkdtempSync(join(tmpdir(), 'native-trace-hardhat-'));
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  try {
    await prepareCompiledSampleProject(dir);
    const ours: TracedRun[] = [];
    const theirs: TracedRun[] = [];
    for (let r = 0; r < rounds; r++) {
      ours.push(await onOurNode(dir));
      theirs.push(await onHardhatNode(dir));
    }
    if (outFile) {
      const dump = (run: TracedRun) => run.requests.map((q) => ({ ...q, ms: Number(q.ms.toFixed(3)), at: Math.round(q.at) }));
      writeFileSync(
        outFile,
        JSON.stringify({ ours: dump(ours[ours.length - 1]), hardhat: dump(theirs[theirs.length - 1]) }, null, 1),
      );
    }
    const secs = (runs: TracedRun[]) => `${(median(runs.map((r) => r.ms)) / 1000).toFixed(2)} s`;
    const cpu = (runs: TracedRun[]) => `${median(runs.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs])))} ms`;
    return [
      `- ${new Date().toISOString()}; \`node dist/bench/hardhat-oracle-trace.js ${rounds}\`; load before ${load}; ${rounds} rounds, medians.`,
      `- Suite through the proxy: ours ${secs(ours)} (server CPU ${cpu(ours)}), hardhat node ${secs(theirs)} (server CPU ${cpu(theirs)}).`,
      '',
      ...table(ours, theirs),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await traceHardhatOracle(Number(process.argv[2] ?? 3), process.argv[3]);
  console.log(rows.join('\n'));
}
