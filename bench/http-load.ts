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
  startBare,
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
 * Env: BENCH_HTTP_SECS (5), BENCH_HTTP_WARMUP_SECS (1), BENCH_HTTP_CONNECTIONS (32), BENCH_HTTP_ROUNDS
 * (1; N = median of N interleaved rounds), BENCH_HTTP_TARGETS (uws,node,ganache,hardhat,bare), BENCH_HTTP_WORKLOADS
 * (blockNumber,getBalance,rest,batch), BENCH_SKIP_PEERS=1, BENCH_NODE_ARGS (node flags for our node, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_BASELINE (a built earlier checkout, scripts/bench-baseline.sh:
 * its node runs as `native [uws] before`, measured in the same rounds).
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

interface Workload {
  key: string;
  label: string;
  /** Request path on a server, undefined when the server has no equivalent (n/a). */
  path(s: Server): string | undefined;
  /** Also measured on the bare reference servers (their ceiling). */
  bare?: boolean;
  body?: string;
  check(json: any): string | undefined;
}

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
    check: (j) =>
      Array.isArray(j) && j.length === BATCH && j.every((x) => rpcOk(x) === undefined)
        ? undefined
        : `bad batch answer: ${JSON.stringify(j).slice(0, 120)}`,
  },
];

/** A server's result on a workload: the median run of the rounds (and every round's req/s), or an error. */
type Cell = { r: WrkResult; all: number[]; note?: string } | { error: string } | undefined;

/** The run with the median req/s (the lower middle one for an even count). */
function medianRun(runs: WrkResult[]): WrkResult {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

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
  const spread = c.all.length > 1 ? `; range ${fmtInt(Math.min(...c.all))}-${fmtInt(Math.max(...c.all))}` : '';
  const notes = [c.note, spread.slice(2)].filter(Boolean).join('; ');
  return `${fmtInt(c.r.rps)} req/s, p99 ${fmtMs(c.r.p99Ms)} ms${notes ? ` (${notes})` : ''}`;
}

function ratio(a: Cell, b: Cell): number | undefined {
  return a && b && 'r' in a && 'r' in b && b.r.rps > 0 ? a.r.rps / b.r.rps : undefined;
}
const fmtRatio = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(2)}x`);

export async function benchHttpLoad(log: (s: string) => void = () => {}): Promise<HttpLoadResult> {
  const seconds = envNum('BENCH_HTTP_SECS', 5);
  const warmup = envNum('BENCH_HTTP_WARMUP_SECS', 1);
  const connections = envNum('BENCH_HTTP_CONNECTIONS', 32);
  const rounds = Math.floor(envNum('BENCH_HTTP_ROUNDS', 1));
  const targets = (process.env.BENCH_HTTP_TARGETS ?? 'uws,node,ganache,hardhat,bare').split(',').map((t) => t.trim());
  const only = process.env.BENCH_HTTP_WORKLOADS?.split(',').map((k) => k.trim());
  const workloads = WORKLOADS.filter((w) => !only || only.includes(w.key));
  const opts: WrkOptions = { seconds, threads: 1, connections, timeoutSecs: 10 };
  const wrkCmd = `wrk -t1 -c${connections} -d${seconds}s --timeout 10s --latency [-s post.lua] <url>`;
  const notes: string[] = [];
  const wrk = findWrk();
  if (!wrk) {
    return { md: ['wrk is not installed (`scripts/setup.sh` installs it with apt); section skipped.', ''] };
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
  const load0 = loadavg()[0];
  try {
    const wantPeers = targets.includes('ganache') || targets.includes('hardhat');
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
    const scripts = new Map(workloads.map((w) => [w.key, w.body ? writePostScript(dir, w.key, w.body) : undefined]));
    const cells = new Map<string, Cell>();
    const runs = new Map<string, WrkResult[]>();
    for (let round = 1; round <= rounds; round++) {
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
          const url = `http://127.0.0.1:${s.port}${path}`;
          const o = { ...opts, script: scripts.get(w.key) };
          try {
            // after each wrk run, one more request waits behind what the server still has queued (slow
            // peers keep working on dropped batches), so no backlog spills into the next measurement
            await runWrk(wrk, url, { ...o, seconds: warmup }).catch(() => undefined);
            await probe(s, w, path);
            const r = await runWrk(wrk, url, o).finally(() => probe(s, w, path));
            const errs = [r.non2xx && `${fmtInt(r.non2xx)} non-2xx`, r.socketErrors && `${fmtInt(r.socketErrors)} socket errors`];
            const all = [...(runs.get(id) ?? []), r];
            runs.set(id, all);
            const note = [prev && 'r' in prev ? prev.note : undefined, errs.filter(Boolean).join(', ')]
              .filter(Boolean)
              .join(', ');
            // The median of the rounds so far (noisy shared machine: not the best one).
            cells.set(id, { r: medianRun(all), all: all.map((x) => x.rps), note: note || undefined });
            log(`${rounds > 1 ? `round ${round}: ` : ''}${w.key} on ${s.name}: ${fmtInt(r.rps)} req/s, p99 ${fmtMs(r.p99Ms)} ms`);
          } catch (e) {
            if (!prev) cells.set(id, { error: (e as Error).message.slice(0, 160) });
          }
        }
      }
    }
    const load1 = loadavg()[0];
    return { md: render(servers, cells, workloads, { seconds, warmup, connections, rounds, wrkCmd, notes, load0, load1 }) };
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
  rounds: number;
  wrkCmd: string;
  notes: string[];
  load0: number;
  load1: number;
}

function render(servers: Server[], cells: Map<string, Cell>, workloads: Workload[], info: RenderInfo): string[] {
  const get = (w: string, name: string) => cells.get(`${w}|${name}`);
  const ours = servers.filter((s) => s.kind === 'native');
  const peers = servers.filter((s) => s.kind === 'peer');
  const bare = servers.filter((s) => s.kind === 'bare');
  const cols = [...ours, ...peers];
  const ratioCols = ours.flatMap((o) => peers.map((p) => [o, p] as const));
  const head = ['Workload', ...cols.map((s) => s.name), ...ratioCols.map(([o, p]) => `${o.name} / ${p.name.split(' ')[0]}`)];
  const rows = workloads.map((w) => [
    w.label,
    ...cols.map((s) => cellText(get(w.key, s.name))),
    ...ratioCols.map(([o, p]) => fmtRatio(ratio(get(w.key, o.name), get(w.key, p.name)))),
  ]);
  const best = info.rounds > 1 ? `, median of ${info.rounds} interleaved rounds (range in parentheses)` : '';
  const md = [
    `wrk on loopback, 1 thread, ${info.connections} keep-alive connections, ${info.seconds} s per measurement after a ` +
      `${info.warmup} s warm-up${best} (\`${info.wrkCmd}\`; POST bodies from a Lua script). Requests/s and the p99 ` +
      'latency of wrk --latency; the ratio columns divide requests/s (above 1: our node is faster).',
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
  ];
  const batch = workloads.find((w) => w.key === 'batch');
  const callsPerSec = batch
    ? cols
        .map((s) => [s, get(batch.key, s.name)] as const)
        .flatMap(([s, c]) => (c && 'r' in c ? [`${s.name} ${fmtInt(c.r.rps * BATCH)}`] : []))
    : [];
  if (callsPerSec.length) md.push(`Batch row in calls/s: ${callsPerSec.join(', ')}.`, '');
  const ceilings = bare.flatMap((s) => {
    const c = get('blockNumber', s.name);
    return c ? [`${s.name} ${cellText(c)}`] : [];
  });
  if (ceilings.length) {
    md.push(
      `Ceiling of each HTTP stack on this machine (\`bench/http-bare-server.ts\`: parses the body, answers a constant ` +
        `JSON-RPC result, no node logic), eth_blockNumber body: ${ceilings.join('; ')}.`,
      '',
    );
  }

  const goals: [string, string, number, string[]][] = [
    ['blockNumber', 'eth_blockNumber >= 1.1x ganache', 1.1, ['ganache']],
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
        const met = measured.length === peerNames.length && measured.every(([, r]) => r! >= min);
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
      `(other engineers' builds and tests); 1-min load average ${info.load0.toFixed(2)} before, ${info.load1.toFixed(2)} ` +
      'after. Repeated runs of the same cell vary by up to ~2x here; ratios taken minutes apart are only indicative. ' +
      '`BENCH_HTTP_ROUNDS=N` reports the median of N interleaved rounds.',
    '- All servers listen on 127.0.0.1 and run at the same time (idle while another is measured; our dev node still ' +
      'produces an empty block per second). Each workload is measured on every server in turn. Our node: `--dev`, rate ' +
      'limits off (`NATIVE_RATE_LIMIT_GLOBAL=0 NATIVE_RATE_LIMIT_WRITE=0`), `--max-concurrent 100000`, metrics on, log ' +
      'level info.',
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
