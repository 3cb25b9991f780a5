import { cpus } from 'node:os';
import { GANACHE_VERSION, HARDHAT_VERSION, type Server } from './http-load-procs.js';
import type { WrkResult } from './wrk.js';

/** The markdown of the HTTP load bench (bench/http-load.ts): requests/s, server CPU per request, goals, caveats. */

export interface Workload {
  key: string;
  label: string;
  /** Request path on a server, undefined when the server has no equivalent (n/a). */
  path(s: Server): string | undefined;
  /** Also measured on the bare reference servers (their ceiling). */
  bare?: boolean;
  body?: string;
  /** JSON-RPC calls one request carries (a batch), for the calls/s line. */
  callsPerRequest?: number;
  check(json: any): string | undefined;
}

/** One wrk run and the server's CPU microseconds per answered request during it (undefined off Linux). */
export interface Run extends WrkResult {
  cpuUs?: number;
  /** The system (kernel) part of cpuUs. */
  sysUs?: number;
}

/**
 * A server's result on a workload: the run with the median req/s and every round's req/s; the median of the
 * rounds' CPU per request (taken on its own: the two medians may come from different rounds); or an error.
 */
export type Cell = { r: Run; all: number[]; cpu: number[]; sys: number[]; note?: string } | { error: string } | undefined;

export interface RenderInfo {
  seconds: number;
  warmup: number;
  connections: number;
  rounds: number;
  wrkCmd: string;
  notes: string[];
  /** 1-min load average at the start of each round, and at the end. */
  loads: number[];
  /** CPUs the servers and wrk were pinned to, when they were. */
  pinned?: { server: string; wrk: string };
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const fmtUs = (us: number) => (us < 10 ? us.toFixed(2) : us < 100 ? us.toFixed(1) : fmtInt(us));
const fmtRatio = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(2)}x`);
const shortName = (s: Server) => s.name.split(' ')[0];

function rpsText(c: Cell): string {
  if (c === undefined) return 'n/a';
  if ('error' in c) return `error: ${c.error}`;
  const spread = c.all.length > 1 ? `; range ${fmtInt(Math.min(...c.all))}-${fmtInt(Math.max(...c.all))}` : '';
  const notes = [c.note, spread.slice(2)].filter(Boolean).join('; ');
  return `${fmtInt(c.r.rps)} req/s, p99 ${fmtMs(c.r.p99Ms)} ms${notes ? ` (${notes})` : ''}`;
}

const cpuOf = (c: Cell): number | undefined => (c && 'r' in c && c.cpu.length ? median(c.cpu) : undefined);
/** The user part (the server's own code) of each run's CPU per request, its median. */
const userOf = (c: Cell): number | undefined =>
  c && 'r' in c && c.sys.length === c.cpu.length && c.cpu.length ? median(c.cpu.map((x, i) => x - c.sys[i])) : undefined;

function cpuText(c: Cell): string {
  if (c === undefined) return 'n/a';
  if ('error' in c) return 'error';
  const us = cpuOf(c);
  if (us === undefined) return 'n/a';
  const user = userOf(c);
  const split = user === undefined ? '' : `user ${fmtUs(user)}, system ${fmtUs(median(c.sys))}`;
  const spread = c.cpu.length > 1 ? `; range ${fmtUs(Math.min(...c.cpu))}-${fmtUs(Math.max(...c.cpu))}` : '';
  return `${fmtUs(us)} µs (${split}${spread}) = ${fmtInt(1e6 / us)} req/s per core`;
}

/** ours / peer in req/s (above 1: ours answers more). */
function rpsRatio(a: Cell, b: Cell): number | undefined {
  return a && b && 'r' in a && 'r' in b && b.r.rps > 0 ? a.r.rps / b.r.rps : undefined;
}

/** peer / ours in CPU per request (above 1: ours is cheaper; the ratio of req/s at equal CPU); `of` picks the part. */
function cpuRatio(ours: Cell, peer: Cell, of = cpuOf): number | undefined {
  const o = of(ours);
  const p = of(peer);
  return o !== undefined && p !== undefined && o > 0 ? p / o : undefined;
}

function table(head: string[], rows: string[][]): string[] {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`), ''];
}

export function render(servers: Server[], cells: Map<string, Cell>, workloads: Workload[], info: RenderInfo): string[] {
  const get = (w: string, name: string) => cells.get(`${w}|${name}`);
  const ours = servers.filter((s) => s.kind === 'native');
  const peers = servers.filter((s) => s.kind === 'peer');
  const bare = servers.filter((s) => s.kind === 'bare');
  const cols = [...ours, ...peers];
  const pairs = ours.flatMap((o) => peers.map((p) => [o, p] as const));
  const best = info.rounds > 1 ? `, median of ${info.rounds} interleaved rounds (range in parentheses)` : '';
  const pin = info.pinned
    ? ` Servers pinned to CPU ${info.pinned.server} and wrk to CPU ${info.pinned.wrk} (\`taskset\`).`
    : ' Servers and wrk not pinned (both cores shared).';
  const md = [
    `wrk on loopback, 1 thread, ${info.connections} keep-alive connections, ${info.seconds} s per measurement after a ` +
      `${info.warmup} s warm-up${best} (\`${info.wrkCmd}\`; POST bodies from a Lua script).${pin} 1-min load average ` +
      `at the start of each round: ${info.loads
        .slice(0, -1)
        .map((l) => l.toFixed(2))
        .join(', ')}; at the end: ` +
      `${info.loads[info.loads.length - 1].toFixed(2)}.`,
    '',
    'Requests/s and the p99 latency of wrk --latency; the ratio columns divide requests/s (above 1: our node answers more):',
    '',
    ...table(
      ['Workload', ...cols.map((s) => s.name), ...pairs.map(([o, p]) => `${o.name} / ${shortName(p)}`)],
      workloads.map((w) => [
        w.label,
        ...cols.map((s) => rpsText(get(w.key, s.name))),
        ...pairs.map(([o, p]) => fmtRatio(rpsRatio(get(w.key, o.name), get(w.key, p.name)))),
      ]),
    ),
    "Server CPU per answered request (user + system time of the server's process group from /proc/<pid>/stat, read " +
      'before and after each measurement, divided by the requests wrk counted; medians of the user and system parts ' +
      "in parentheses), and what one core would answer at that cost; the ratio columns divide the peer's CPU per " +
      'request by ours (above 1: our node is cheaper):',
    '',
    ...table(
      ['Workload', ...[...cols, ...bare].map((s) => s.name), ...pairs.map(([o, p]) => `${shortName(p)} / ${o.name} (CPU)`)],
      workloads.map((w) => [
        w.label,
        ...[...cols, ...bare].map((s) => (s.kind === 'bare' && !w.bare ? 'n/a' : cpuText(get(w.key, s.name)))),
        ...pairs.map(([o, p]) => fmtRatio(cpuRatio(get(w.key, o.name), get(w.key, p.name)))),
      ]),
    ),
  ];
  const callsPerSec = workloads
    .filter((w) => w.callsPerRequest)
    .flatMap((w) =>
      cols.flatMap((s) => {
        const c = get(w.key, s.name);
        return c && 'r' in c ? [`${s.name} ${fmtInt(c.r.rps * (w.callsPerRequest as number))}`] : [];
      }),
    );
  if (callsPerSec.length) md.push(`Batch row in calls/s: ${callsPerSec.join(', ')}.`, '');
  const ceilings = bare.flatMap((s) => {
    const c = get('blockNumber', s.name);
    return c ? [`${s.name} ${rpsText(c)}`] : [];
  });
  if (ceilings.length) {
    md.push(
      `Ceiling of each HTTP stack on this machine (\`bench/http-bare-server.ts\`: parses the body, answers a constant ` +
        `JSON-RPC result, no node logic), eth_blockNumber body: ${ceilings.join('; ')}.`,
      '',
    );
  }
  if (peers.length) md.push(...goalLines(ours, peers, get), '');
  md.push(...caveats(info));
  return md;
}

/** The goals, decided on CPU per request (what the server pays), with the req/s ratio next to it. */
function goalLines(ours: Server[], peers: Server[], get: (w: string, name: string) => Cell): string[] {
  const goals: [string, string, number, string[]][] = [
    ['blockNumber', 'eth_blockNumber >= 1.1x ganache', 1.1, ['ganache']],
    ['getBalance', 'eth_getBalance >= 5x ganache and >= 5x hardhat', 5, ['ganache', 'hardhat']],
  ];
  const lines = [
    'Goals, decided on CPU per request (user + system: requests/s at equal CPU); the user part alone and the ' +
      'requests/s ratio in brackets:',
    '',
  ];
  for (const [key, text, min, peerNames] of goals) {
    const parts = ours.map((o) => {
      const rs = peers
        .filter((p) => peerNames.some((n) => p.name.startsWith(n)))
        .map((p) => ({
          n: shortName(p),
          cpu: cpuRatio(get(key, o.name), get(key, p.name)),
          user: cpuRatio(get(key, o.name), get(key, p.name), userOf),
          rps: rpsRatio(get(key, o.name), get(key, p.name)),
        }));
      const measured = rs.filter((r) => r.cpu !== undefined);
      if (!measured.length) return `${o.name} n/a`;
      const met = measured.length === peerNames.length && measured.every((r) => (r.cpu as number) >= min);
      const each = measured
        .map((r) => `${fmtRatio(r.cpu)} ${r.n} [user CPU ${fmtRatio(r.user)}, req/s ${fmtRatio(r.rps)}]`)
        .join(', ');
      return `${o.name} ${each} -> ${met ? 'met' : 'MISSED'}`;
    });
    lines.push(`- ${text}: ${parts.join('; ')}`);
  }
  return lines;
}

function caveats(info: RenderInfo): string[] {
  return [
    'Caveats:',
    '',
    `- ${cpus().length} CPUs shared by wrk (1 thread), the server under load and whatever else runs on the machine ` +
      "(other engineers' builds and tests). Repeated runs of the same cell vary by up to ~2x here; " +
      '`BENCH_HTTP_ROUNDS=N` reports the median of N interleaved rounds.',
    '- Why the goals are decided on CPU per request: on 2 cores with wrk on one of them, every uWebSockets.js server ' +
      '(ours, ganache, which runs on uWebSockets.js too, and the bare one that answers a constant) meets the same ' +
      "requests/s ceiling for a trivial method: the load generator and the kernel's loopback, not the server. The " +
      'CPU a server spends per answer is what a busier machine or a client with more cores would turn into ' +
      'requests/s; it is read from /proc around the same wrk run, so both columns come from one measurement.',
    '- The system part is the same kernel work on every uWebSockets.js server: per request one recvfrom and one ' +
      'sendto, and one epoll_pwait per 32 requests (`strace -c` on our node, the baseline and ganache under this load); ' +
      "its spread between rounds is the shared machine, not the server. The user part is the server's own code " +
      '(HTTP parsing in uWS, JSON, routing, the method, metrics).',
    '- Background work is charged to the requests too: idle, our dev node used ~2 ms of CPU per second (an empty block ' +
      'each second, metrics) and ganache ~5 ms (10 s of /proc readings), under 1% of a measurement.',
    '- All servers listen on 127.0.0.1 and run at the same time (idle while another is measured). Each workload is ' +
      'measured on every server in turn. Our node: `--dev`, rate limits off (`NATIVE_RATE_LIMIT_GLOBAL=0 ' +
      'NATIVE_RATE_LIMIT_WRITE=0`), `--max-concurrent 100000`, metrics on, log level info.',
    `- Peers: ganache ${GANACHE_VERSION} (\`--logging.quiet\`, Hardhat mnemonic so the account is funded) and ` +
      `\`hardhat node\` ${HARDHAT_VERSION} (chainId 31337, its per-call stdout log discarded), installed on demand ` +
      'into the gitignored `bench/.peers/`. REST has no equivalent on the peers (n/a).',
    '- Each answer is checked once before the load (JSON-RPC result, batch of 100 results, REST balance); wrk ' +
      'counts non-2xx answers and socket errors, shown next to a cell when there are any.',
    ...info.notes.map((n) => `- Note: ${n}`),
    '',
  ];
}
