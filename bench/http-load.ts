import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ensurePeers,
  GANACHE_VERSION,
  HARDHAT_VERSION,
  type Server,
  startGanache,
  startHardhat,
  startNative,
  stopAll,
  stopServer,
} from './http-load-procs.js';
import { findWrk, runWrk, type WrkOptions, type WrkResult, writePostScript } from './wrk.js';

/**
 * HTTP load on loopback with wrk: our node on both HTTP backends side by side with ganache and
 * `hardhat node`. All servers start first (idle ones cost nothing measurable), then each workload is
 * measured on every server in turn, so the columns of a row are taken close together in time.
 *
 * Env: BENCH_HTTP_SECS (5), BENCH_HTTP_WARMUP_SECS (1), BENCH_HTTP_CONNECTIONS (32),
 * BENCH_HTTP_TARGETS (uws,node,ganache,hardhat), BENCH_HTTP_WORKLOADS (blockNumber,getBalance,rest,batch),
 * BENCH_SKIP_PEERS=1, BENCH_NODE_ARGS (node flags
 * for our node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */

export const FUNDED = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BATCH = 100;

const rpc = (id: number, method: string, params: unknown[]) => ({ jsonrpc: '2.0', id, method, params });
const isHex = (v: unknown) => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v);
const rpcOk = (j: any) => (isHex(j?.result) ? undefined : `bad answer: ${JSON.stringify(j).slice(0, 120)}`);

interface Workload {
  key: string;
  label: string;
  /** Request path on a server, undefined when the server has no equivalent (n/a). */
  path(s: Server): string | undefined;
  body?: string;
  check(json: any): string | undefined;
}

const WORKLOADS: Workload[] = [
  {
    key: 'blockNumber',
    label: 'JSON-RPC eth_blockNumber',
    path: (s) => s.rpcPath,
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
    path: (s) => (s.rest ? `/accounts/${FUNDED}/balance` : undefined),
    check: (j) => (j?.balance !== undefined ? undefined : `bad answer: ${JSON.stringify(j).slice(0, 120)}`),
  },
  {
    key: 'batch',
    label: `JSON-RPC batch of ${BATCH} eth_getBalance (1 request = ${BATCH} calls)`,
    path: (s) => s.rpcPath,
    body: JSON.stringify(Array.from({ length: BATCH }, (_, i) => rpc(i + 1, 'eth_getBalance', [FUNDED, 'latest']))),
    check: (j) =>
      Array.isArray(j) && j.length === BATCH && j.every((x) => rpcOk(x) === undefined)
        ? undefined
        : `bad batch answer: ${JSON.stringify(j).slice(0, 120)}`,
  },
];

type Cell = { r: WrkResult; note?: string } | { error: string } | undefined;

export interface HttpLoadResult {
  /** Markdown lines of the section (table, goals, caveats). */
  md: string[];
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

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

function cellText(c: Cell): string {
  if (c === undefined) return 'n/a';
  if ('error' in c) return `error: ${c.error}`;
  return `${fmtInt(c.r.rps)} req/s, p99 ${fmtMs(c.r.p99Ms)} ms${c.note ? ` (${c.note})` : ''}`;
}

function ratio(a: Cell, b: Cell): number | undefined {
  return a && b && 'r' in a && 'r' in b && b.r.rps > 0 ? a.r.rps / b.r.rps : undefined;
}
const fmtRatio = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(2)}x`);

export async function benchHttpLoad(log: (s: string) => void = () => {}): Promise<HttpLoadResult> {
  const seconds = envNum('BENCH_HTTP_SECS', 5);
  const warmup = envNum('BENCH_HTTP_WARMUP_SECS', 1);
  const connections = envNum('BENCH_HTTP_CONNECTIONS', 32);
  const targets = (process.env.BENCH_HTTP_TARGETS ?? 'uws,node,ganache,hardhat').split(',').map((t) => t.trim());
  const opts: WrkOptions = { seconds, threads: 1, connections };
  const wrkCmd = `wrk -t1 -c${connections} -d${seconds}s --latency [-s post.lua] <url>`;
  const notes: string[] = [];
  const wrk = findWrk();
  if (!wrk) {
    return { md: ['wrk is not installed (`scripts/setup.sh` installs it with apt); section skipped.', ''] };
  }
  const peerTargets = targets.filter((t) => t === 'ganache' || t === 'hardhat');
  const peersMissing = peerTargets.length ? await ensurePeers(log) : undefined;
  if (peersMissing) notes.push(peersMissing);

  const dir = mkdtempSync(join(tmpdir(), 'native-bench-load-'));
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping servers`);
    stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const servers: Server[] = [];
  const load0 = loadavg()[0];
  try {
    const starts: Promise<Server>[] = [];
    for (const t of targets) {
      if (t === 'uws' || t === 'node') starts.push(startNative(t, join(dir, t)));
      else if (!peersMissing && t === 'ganache') starts.push(startGanache());
      else if (!peersMissing && t === 'hardhat') starts.push(startHardhat());
    }
    log(`starting ${targets.join(', ')} ...`);
    const started = await Promise.allSettled(starts);
    for (const s of started) {
      if (s.status === 'fulfilled') servers.push(s.value);
      else notes.push(`could not start: ${(s.reason as Error).message}`);
    }
    const scripts = new Map(WORKLOADS.map((w) => [w.key, w.body ? writePostScript(dir, w.key, w.body) : undefined]));
    const cells = new Map<string, Cell>();
    const only = process.env.BENCH_HTTP_WORKLOADS?.split(',').map((k) => k.trim());
    for (const w of WORKLOADS) {
      if (only && !only.includes(w.key)) continue;
      for (const s of servers) {
        const path = w.path(s);
        if (path === undefined) continue;
        const bad = await probe(s, w, path);
        if (bad) {
          cells.set(`${w.key}|${s.name}`, { error: bad });
          continue;
        }
        const url = `http://127.0.0.1:${s.port}${path}`;
        const o = { ...opts, script: scripts.get(w.key) };
        try {
          await runWrk(wrk, url, { ...o, seconds: warmup });
          const r = await runWrk(wrk, url, o);
          const errs = [r.non2xx && `${fmtInt(r.non2xx)} non-2xx`, r.socketErrors && `${fmtInt(r.socketErrors)} socket errors`];
          const note = errs.filter(Boolean).join(', ') || undefined;
          cells.set(`${w.key}|${s.name}`, { r, note });
          log(`${w.key} on ${s.name}: ${cellText(cells.get(`${w.key}|${s.name}`))}`);
        } catch (e) {
          cells.set(`${w.key}|${s.name}`, { error: (e as Error).message.slice(0, 160) });
        }
      }
    }
    const load1 = loadavg()[0];
    return { md: render(servers, cells, { seconds, warmup, connections, wrkCmd, notes, load0, load1 }) };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.all(servers.map((s) => stopServer(s.child)));
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface RenderInfo {
  seconds: number;
  warmup: number;
  connections: number;
  wrkCmd: string;
  notes: string[];
  load0: number;
  load1: number;
}

function render(servers: Server[], cells: Map<string, Cell>, info: RenderInfo): string[] {
  const get = (w: string, name: string) => cells.get(`${w}|${name}`);
  const ours = servers.filter((s) => s.rest);
  const peers = servers.filter((s) => !s.rest);
  const ratioCols = ours.flatMap((o) => peers.map((p) => [o, p] as const));
  const head = ['Workload', ...servers.map((s) => s.name), ...ratioCols.map(([o, p]) => `${o.name} / ${p.name}`)];
  const rows = WORKLOADS.map((w) => [
    w.label,
    ...servers.map((s) => cellText(get(w.key, s.name))),
    ...ratioCols.map(([o, p]) => fmtRatio(ratio(get(w.key, o.name), get(w.key, p.name)))),
  ]);
  const md = [
    `wrk on loopback, 1 thread, ${info.connections} keep-alive connections, ${info.seconds} s per measurement after a ` +
      `${info.warmup} s warm-up (\`${info.wrkCmd}\`; POST bodies from a Lua script). Requests/s and the p99 latency of ` +
      'wrk --latency; the ratio columns divide requests/s (higher is better for us).',
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
  ];
  const batch = WORKLOADS.find((w) => w.key === 'batch')!;
  const callsPerSec = servers
    .map((s) => get(batch.key, s.name))
    .map((c, i) => (c && 'r' in c ? `${servers[i].name} ${fmtInt(c.r.rps * BATCH)}` : undefined))
    .filter(Boolean);
  if (callsPerSec.length) md.push(`Batch row in calls/s: ${callsPerSec.join(', ')}.`, '');

  const goals: [string, string, number, string[]][] = [
    ['blockNumber', 'eth_blockNumber >= 1.5x ganache', 1.5, ['ganache']],
    ['getBalance', 'eth_getBalance >= 5x ganache and >= 5x hardhat', 5, ['ganache', 'hardhat']],
  ];
  if (peers.length) {
    md.push('Goals:', '');
    for (const [key, text, min, peerNames] of goals) {
      const parts = ours.map((o) => {
        const rs = peers
          .filter((p) => peerNames.some((n) => p.name.startsWith(n)))
          .map((p) => [p.name.split(' ')[0], ratio(get(key, o.name), get(key, p.name))] as const);
        const measured = rs.filter(([, r]) => r !== undefined);
        if (!measured.length) return `${o.name} n/a`;
        const met = measured.length === rs.length && measured.every(([, r]) => r! >= min);
        return `${o.name} ${measured.map(([n, r]) => `${fmtRatio(r)} ${n}`).join(', ')} -> ${met ? 'met' : 'MISSED'}`;
      });
      md.push(`- ${text}: ${parts.join('; ')}`);
    }
    md.push('');
  }
  md.push(
    'Caveats:',
    '',
    `- ${cpus().length} CPUs shared by wrk (1 thread), the server under load and whatever else runs on the machine ` +
      `(other engineers' tests); 1-min load average ${info.load0.toFixed(2)} before, ${info.load1.toFixed(2)} after. ` +
      'Single runs: treat differences under ~15-20% as noise; ratios are more stable than absolute numbers.',
    '- All servers listen on 127.0.0.1 and run at the same time (idle while another is measured; our dev node still ' +
      'produces an empty block per second). Our node: `--dev`, rate limits off (`NATIVE_RATE_LIMIT_GLOBAL=0 ' +
      'NATIVE_RATE_LIMIT_WRITE=0`), `--max-concurrent 100000`, log level info.',
    `- Peers: ganache ${GANACHE_VERSION} (\`--logging.quiet\`, Hardhat mnemonic so the account is funded) and ` +
      `\`hardhat node\` ${HARDHAT_VERSION} (chainId 31337, its per-call stdout log discarded), installed on demand ` +
      'into the gitignored `bench/.peers/`. REST has no equivalent on the peers (n/a).',
    '- Each answer is checked once before the load (JSON-RPC result, batch of 100 results, REST balance); wrk ' +
      'counts non-2xx answers and socket errors, shown next to a cell when there are any.',
    ...info.notes.map((n) => `- Note: ${n}`),
    '',
  );
  return md;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchHttpLoad((s) => process.stderr.write(`${s}\n`)).then(
    (r) => process.stdout.write(`## HTTP load vs peers\n\n${r.md.join('\n')}\n`),
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
