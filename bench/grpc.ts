/**
 * The gRPC transport's bench (`npm run bench:grpc`; section "gRPC transport" of bench/RESULTS.md):
 *
 * 1. GetBlock and GetBalance requests/s against their JSON-RPC equivalents (eth_getBlockByNumber,
 *    eth_getBalance) on the same node in the same run, interleaved rounds, medians: JSON-RPC and gRPC-Web
 *    with wrk (HTTP/1.1, the API port), gRPC over HTTP/2 (@grpc/grpc-js) with h2load. Goal >= 2x JSON-RPC.
 * 2. StreamEvents fan-out to 1,000 subscribers (another process, 10 HTTP/2 connections): the delay from the
 *    node's finalized-block event to each subscriber's arrival. Goal p95 <= 50 ms.
 *
 * Env: BENCH_GRPC_ROUNDS (default 3), BENCH_GRPC_SECONDS (5), BENCH_FANOUT_STREAMS (1000),
 * BENCH_FANOUT_BLOCKS (30), BENCH_GRPC_WRITE=0 to print without writing RESULTS.md, BENCH_GRPC_ONLY=fanout to
 * skip the requests/s part (=requests to skip the fan-out), BENCH_GRPC_WORKLOADS="GetBalance/gRPC-Web,..." to run
 * only those cells (for profiling: `node --cpu-prof dist/bench/grpc.js`; the node runs in this process).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { GetBalanceRequestSchema, GetBlockRequestSchema } from '../ts/grpc/gen/native/v1/native_pb.js';
import { parseConfig } from '../ts/node/config.js';
import { NativeNode } from '../ts/node/node.js';
import { startBare, stopServer } from './http-load-procs.js';
import { cpuSeconds } from './proc-cpu.js';
import { RESULTS_FILE, writeResultsSection } from './results-file.js';
import { findWrk, runWrk } from './wrk.js';

const ROUNDS = Number(process.env.BENCH_GRPC_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_GRPC_SECONDS ?? 5);
const FANOUT_STREAMS = Number(process.env.BENCH_FANOUT_STREAMS ?? 1000);
const FANOUT_CONNECTIONS = 10;
const FANOUT_BLOCKS = Number(process.env.BENCH_FANOUT_BLOCKS ?? 30);
/**
 * Blocks delivered to every subscriber before the measured ones, as the requests/s part has its warm-up round:
 * the first fan-outs after the streams open run cold code in both processes (measured: 30-60 ms of the node's
 * CPU for the first block, 5-9 ms once warm). Reported apart (p95 from the first block on).
 */
const FANOUT_WARMUP_BLOCKS = Number(process.env.BENCH_FANOUT_WARMUP ?? 5);
/** In flight at once: wrk 32 connections; h2load 4 connections x 8 streams. */
const WRK = { threads: 1, connections: 32 };
const H2 = { clients: 4, streams: 8 };
/** The same 32 calls in flight the way a gRPC client sends them: one channel (connection), multiplexed. */
const H2_ONE_CHANNEL = { clients: 1, streams: 32 };
const BLOCK_HEIGHT = 5;
const ACCOUNT = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const SECTION = '## gRPC transport (native.v1)';

const log = (s: string) => process.stdout.write(`${s}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A gRPC message in its length-prefixed frame (the body of gRPC and gRPC-Web requests alike). */
function framed(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** A wrk script POSTing `body` (bytes, as Lua decimal escapes) with a content type. */
function wrkScript(dir: string, name: string, contentType: string, body: Uint8Array): string {
  const path = join(dir, `${name}.lua`);
  const lua = Array.from(body, (b) => `\\${b}`).join('');
  writeFileSync(path, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "${contentType}"\nwrk.body = "${lua}"\n`);
  return path;
}

function findH2load(): string | undefined {
  for (const p of ['/usr/bin/h2load', '/usr/local/bin/h2load']) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}

interface LoadResult {
  rps: number;
  failed: number;
  /** Requests answered in the run. */
  done: number;
}

/** h2load over HTTP/2 (prior knowledge) posting one gRPC request body. */
function runH2load(bin: string, url: string, bodyFile: string, seconds: number, h2 = H2): Promise<LoadResult> {
  const args = [
    '-D',
    String(seconds),
    '-t1',
    `-c${h2.clients}`,
    `-m${h2.streams}`,
    '-d',
    bodyFile,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', () => {
      const rps = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(out);
      const req = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
      if (!rps || !req) return reject(new Error(`unexpected h2load output: ${out.slice(0, 300)}`));
      resolve({ rps: Number(rps[1]), failed: Number(req[2]) + Number(req[3]), done: Number(req[1]) });
    });
  });
}

/** One answer of each workload, checked before the load (a wrong answer would be counted as a fast one). */
async function checkAnswers(api: string, grpcPort: number, web: { block: Buffer; balance: Buffer }): Promise<void> {
  const rpc = async (method: string, params: unknown[]) => {
    const r = (await (
      await fetch(`${api}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      })
    ).json()) as { result?: unknown };
    if (r.result === undefined || r.result === null) throw new Error(`${method}: no result`);
  };
  await rpc('eth_getBlockByNumber', [`0x${BLOCK_HEIGHT.toString(16)}`, false]);
  await rpc('eth_getBalance', [ACCOUNT, 'latest']);
  for (const [name, body] of Object.entries(web)) {
    const res = Buffer.from(
      await (
        await fetch(`${api}/native.v1.Native/${name === 'block' ? 'GetBlock' : 'GetBalance'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/grpc-web+proto' },
          body,
        })
      ).arrayBuffer(),
    );
    if (
      res[0] !== 0 ||
      !res
        .subarray(res.length - 20)
        .toString('latin1')
        .includes('grpc-status:0')
    )
      throw new Error(`gRPC-Web ${name}: not OK`);
  }
  const client = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
  for (const [path, body] of [
    ['/native.v1.Native/GetBlock', web.block.subarray(5)],
    ['/native.v1.Native/GetBalance', web.balance.subarray(5)],
  ] as const) {
    await new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(body),
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  }
  client.close();
}

interface Cell {
  workload: string;
  transport: 'JSON-RPC' | 'gRPC-Web' | 'gRPC' | 'gRPC, 1 connection' | 'bare uWS' | 'bare grpc-js' | 'bare node:http2';
  rps: number[];
  /** The serving process's CPU time per answered request, µs: the cost per request, whatever the machine's load. */
  cpuUs: number[];
  failed: number;
  /** The serving process when it is not this one (the bare uWS reference). */
  pid?: number;
}

async function loadBench(node: NativeNode, dir: string): Promise<{ cells: Cell[]; h2load: boolean }> {
  const wrk = findWrk();
  if (!wrk) throw new Error('wrk is not installed (scripts/setup.sh installs it)');
  const h2load = findH2load();
  const api = `http://127.0.0.1:${node.http.port}`;
  const grpcUrl = `http://127.0.0.1:${node.grpc!.port}`;
  const block = framed(
    toBinary(
      GetBlockRequestSchema,
      create(GetBlockRequestSchema, { selector: { case: 'height', value: { value: BigInt(BLOCK_HEIGHT) } } }),
    ),
  );
  const balance = framed(
    toBinary(
      GetBalanceRequestSchema,
      create(GetBalanceRequestSchema, { address: { value: Buffer.from(ACCOUNT.slice(2), 'hex') } }),
    ),
  );
  await checkAnswers(api, node.grpc!.port, { block, balance });
  const json = (method: string, params: unknown[]) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  writeFileSync(join(dir, 'block.bin'), block);
  writeFileSync(join(dir, 'balance.bin'), balance);
  const runs: { cell: Cell; run: () => Promise<LoadResult> }[] = [];
  const only = process.env.BENCH_GRPC_WORKLOADS?.split(',');
  const add = (workload: string, transport: Cell['transport'], run: () => Promise<LoadResult>, pid?: number) => {
    if (!only || only.includes(`${workload}/${transport}`))
      runs.push({ cell: { workload, transport, rps: [], cpuUs: [], failed: 0, pid }, run });
  };
  const viaWrk = (url: string, script: string) => async () => {
    const r = await runWrk(wrk, url, { seconds: SECONDS, ...WRK, script, timeoutSecs: 10 });
    return { rps: r.rps, failed: r.non2xx + r.socketErrors, done: r.requests - r.non2xx };
  };
  const blockParams = [`0x${BLOCK_HEIGHT.toString(16)}`, false];
  add(
    'GetBlock',
    'JSON-RPC',
    viaWrk(`${api}/rpc`, wrkScript(dir, 'rpc-block', 'application/json', json('eth_getBlockByNumber', blockParams))),
  );
  add(
    'GetBlock',
    'gRPC-Web',
    viaWrk(`${api}/native.v1.Native/GetBlock`, wrkScript(dir, 'web-block', 'application/grpc-web+proto', block)),
  );
  if (h2load)
    add('GetBlock', 'gRPC', () => runH2load(h2load, `${grpcUrl}/native.v1.Native/GetBlock`, join(dir, 'block.bin'), SECONDS));
  add(
    'GetBalance',
    'JSON-RPC',
    viaWrk(`${api}/rpc`, wrkScript(dir, 'rpc-balance', 'application/json', json('eth_getBalance', [ACCOUNT, 'latest']))),
  );
  add(
    'GetBalance',
    'gRPC-Web',
    viaWrk(`${api}/native.v1.Native/GetBalance`, wrkScript(dir, 'web-balance', 'application/grpc-web+proto', balance)),
  );
  if (h2load) {
    const path = `${grpcUrl}/native.v1.Native/GetBalance`;
    add('GetBalance', 'gRPC', () => runH2load(h2load, path, join(dir, 'balance.bin'), SECONDS));
    add('GetBalance', 'gRPC, 1 connection', () => runH2load(h2load, path, join(dir, 'balance.bin'), SECONDS, H2_ONE_CHANNEL));
  }
  // The stacks' ceilings on this machine, each in its own process with no node logic: uWS answering a constant
  // JSON-RPC result; grpc-js and node:http2 answering a constant 80-byte message (bench/grpc-bare-server.ts).
  const bare = await startBare('uws');
  const bareGrpc = h2load ? await startGrpcBare('grpc-js') : undefined;
  const bareH2 = h2load ? await startGrpcBare('http2') : undefined;
  add(
    'ceiling',
    'bare uWS',
    viaWrk(`http://127.0.0.1:${bare.port}/`, wrkScript(dir, 'bare', 'application/json', json('eth_blockNumber', []))),
    bare.child.pid,
  );
  for (const [transport, ref] of [
    ['bare grpc-js', bareGrpc],
    ['bare node:http2', bareH2],
  ] as const) {
    if (h2load && ref) {
      const url = `http://127.0.0.1:${ref.port}/native.v1.Native/GetBalance`;
      add('ceiling', transport, () => runH2load(h2load, url, join(dir, 'balance.bin'), SECONDS), ref.child.pid);
    }
  }
  try {
    // Warm-up: every workload once, untimed.
    for (const r of runs) await r.run();
    await measureRounds(runs);
  } finally {
    await stopServer(bare.child);
    if (bareGrpc) await stopServer(bareGrpc.child);
    if (bareH2) await stopServer(bareH2.child);
  }
  return { cells: runs.map((r) => r.cell), h2load: h2load !== undefined };
}

/** A reference gRPC server (bench/grpc-bare-server.ts) in its own process, once it listens. */
async function startGrpcBare(mode: 'grpc-js' | 'http2'): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./grpc-bare-server.js', import.meta.url)), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // Its own process group, as the other reference servers (stopServer signals the group).
    detached: true,
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`grpc-bare-server ${mode} exited with ${code}`)));
  });
  child.stdout.resume();
  return { child, port };
}

async function measureRounds(runs: { cell: Cell; run: () => Promise<LoadResult> }[]): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const r of runs) {
      const cpu0 = cpuSeconds(r.cell.pid);
      const out = await r.run();
      const cpuUs = ((cpuSeconds(r.cell.pid) - cpu0) * 1e6) / Math.max(1, out.done);
      r.cell.rps.push(out.rps);
      r.cell.cpuUs.push(cpuUs);
      r.cell.failed += out.failed;
      log(`  round ${round}: ${r.cell.workload} ${r.cell.transport}: ${fmt(out.rps)} req/s, ${cpuUs.toFixed(1)} µs CPU/request`);
    }
  }
}

interface Fanout {
  /** Medians per block: the first subscriber's delay; the node's CPU from one block's event to the next. */
  firstMs: number;
  nodeCpuMs: number;
  /** The subscribers' process: CPU per block. */
  clientCpuMs: number;
  streams: number;
  blocks: number;
  deliveries: number;
  expected: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** p95 over every block from the subscription on, warm-up blocks included. */
  p95FromSubscription: number;
  why: string;
}

/** Subscribers in another process; delay = arrival - the moment the node's feed announced the block. */
async function fanoutBench(node: NativeNode): Promise<Fanout> {
  const feed = node.ctx.events!;
  const announced = new Map<number, number>();
  // Registered before any subscriber: the feed calls listeners in order, so this time precedes every push.
  // The node's CPU time at each event: from one to the next is all it did for a block (making it, about
  // 0.6 ms here, and the fan-out, which runs in slices over several turns of the event loop).
  const cpuAt = new Map<number, number>();
  const off = feed.on((e) => {
    if (e.kind !== 'block_finalized') return;
    announced.set(e.block.index, performance.timeOrigin + performance.now());
    const c = process.cpuUsage();
    cpuAt.set(e.block.index, (c.user + c.system) / 1000);
  });
  const nodeCpu = (h: number) => (cpuAt.get(h + 1) ?? Number.NaN) - (cpuAt.get(h) ?? Number.NaN);
  const client = fork(fileURLToPath(new URL('./grpc-fanout-client.js', import.meta.url)), [
    JSON.stringify({
      port: node.grpc!.port,
      streams: FANOUT_STREAMS,
      connections: FANOUT_CONNECTIONS,
      blocks: FANOUT_WARMUP_BLOCKS + FANOUT_BLOCKS + 3,
      timeoutMs: (FANOUT_WARMUP_BLOCKS + FANOUT_BLOCKS + 60) * node.config.blockTimeMs,
    }),
  ]);
  // Measure blocks announced once every stream is subscribed.
  const base = feed.listenerCount;
  const until = Date.now() + 120_000;
  while (feed.listenerCount < base + FANOUT_STREAMS) {
    if (Date.now() > until) throw new Error(`only ${feed.listenerCount - base} of ${FANOUT_STREAMS} streams subscribed`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const subscribed = node.ctx.chain.height + 1;
  const first = subscribed + FANOUT_WARMUP_BLOCKS;
  const last = first + FANOUT_BLOCKS - 1;
  // The subscribers' CPU between the announcements of `first` and `last + 1`: the measured blocks' arrivals.
  const clientCpuAt = new Map<number, number>();
  const offClient = feed.on((e) => {
    if (e.kind === 'block_finalized' && (e.block.index === first || e.block.index === last + 1))
      clientCpuAt.set(e.block.index, cpuSeconds(client.pid));
  });
  const report = await new Promise<{ why: string; perStream: [number, number][][] }>((resolve, reject) => {
    client.once('message', (m) => resolve(m as { why: string; perStream: [number, number][][] }));
    client.once('exit', (code) => reject(new Error(`fan-out client exited with ${code}`)));
  });
  off();
  offClient();
  const delays: number[] = [];
  const fromSubscription: number[] = [];
  const byBlock = new Map<number, number[]>();
  for (const stream of report.perStream) {
    for (const [seq, at] of stream) {
      const t0 = announced.get(seq);
      if (seq < subscribed || seq > last || t0 === undefined) continue;
      fromSubscription.push(at - t0);
      if (seq < first) continue;
      delays.push(at - t0);
      let d = byBlock.get(seq);
      if (!d) byBlock.set(seq, (d = []));
      d.push(at - t0);
    }
  }
  delays.sort((a, b) => a - b);
  fromSubscription.sort((a, b) => a - b);
  // Per block (the log only): first and last arrival and the node's CPU, to tell a slow fan-out from a slow block.
  const firsts: number[] = [];
  for (const [seq, d] of [...byBlock].sort((a, b) => a[0] - b[0])) {
    if (seq === first) log('  (measured from here)');
    if (seq >= first) firsts.push(Math.min(...d));
    log(
      `  block ${seq}: first ${Math.min(...d).toFixed(1)} ms, last ${Math.max(...d).toFixed(1)} ms; node ${nodeCpu(seq).toFixed(1)} ms CPU`,
    );
  }
  const quantile = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;
  const q = (p: number) => quantile(delays, p);
  const measured = [...byBlock.keys()].filter((h) => h >= first).map(nodeCpu);
  return {
    firstMs: median(firsts),
    nodeCpuMs: median(measured.filter((x) => !Number.isNaN(x))),
    clientCpuMs: (((clientCpuAt.get(last + 1) ?? Number.NaN) - (clientCpuAt.get(first) ?? Number.NaN)) * 1000) / FANOUT_BLOCKS,
    streams: FANOUT_STREAMS,
    blocks: FANOUT_BLOCKS,
    deliveries: delays.length,
    expected: FANOUT_STREAMS * FANOUT_BLOCKS,
    p50: q(0.5),
    p95: q(0.95),
    p99: q(0.99),
    max: delays.at(-1) ?? Number.NaN,
    p95FromSubscription: quantile(fromSubscription, 0.95),
    why: report.why,
  };
}

function section(o: {
  cells: Cell[];
  h2load: boolean;
  fanout: Fanout;
  load: { before: number; after: number };
  date: string;
}): string[] {
  const cpu = cpus();
  const get = (w: string, t: Cell['transport']) => o.cells.find((c) => c.workload === w && c.transport === t);
  const cellText = (c: Cell | undefined) =>
    c
      ? `${fmt(median(c.rps))} req/s (range ${fmt(Math.min(...c.rps))}-${fmt(Math.max(...c.rps))}), ${median(c.cpuUs).toFixed(1)} µs CPU/req${c.failed ? `, ${c.failed} failed` : ''}`
      : 'n/a';
  const ratio = (c: Cell | undefined, base: Cell | undefined) =>
    c && base ? `${(median(c.rps) / median(base.rps)).toFixed(2)}x` : 'n/a';
  const rows = ['GetBlock', 'GetBalance'].map((w) => {
    const rpc = get(w, 'JSON-RPC');
    const web = get(w, 'gRPC-Web');
    const h2 = get(w, 'gRPC');
    return `| ${w} | ${cellText(rpc)} | ${cellText(web)} | ${cellText(h2)} | ${ratio(web, rpc)} | ${ratio(h2, rpc)} |`;
  });
  const ceiling = get('ceiling', 'bare uWS');
  const ceilingGrpc = get('ceiling', 'bare grpc-js');
  const ceilingH2 = get('ceiling', 'bare node:http2');
  const oneChannel = get('GetBalance', 'gRPC, 1 connection');
  const cost = (w: string) => {
    const rpc = get(w, 'JSON-RPC');
    const parts = (['gRPC-Web', 'gRPC'] as const).map((t) => {
      const c = get(w, t);
      return c && rpc ? `${t} ${(median(rpc.cpuUs) / median(c.cpuUs)).toFixed(2)}x` : `${t} n/a`;
    });
    return `- ${w}, the node's CPU per request, JSON-RPC's over the transport's (above 1 = cheaper than JSON-RPC): ${parts.join('; ')}`;
  };
  const goal = (w: string) => {
    const rpc = get(w, 'JSON-RPC');
    const parts = (['gRPC-Web', 'gRPC'] as const).map((t) => {
      const c = get(w, t);
      if (!c || !rpc) return `${t} n/a`;
      const x = median(c.rps) / median(rpc.rps);
      return `${t} ${x.toFixed(2)}x -> ${x >= 2 ? 'met' : 'MISSED'}`;
    });
    return `- ${w} >= 2x JSON-RPC: ${parts.join('; ')}`;
  };
  const f = o.fanout;
  return [
    SECTION,
    '',
    `- Date: ${o.date}; machine: ${cpu.length} x ${cpu[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}; 1-min load average ${o.load.before.toFixed(2)} before, ${o.load.after.toFixed(2)} after (shared, noisy machine).`,
    `- Command: \`npm run bench:grpc\` (bench/grpc.ts). One dev node in the bench process (uWS backend, rate limits off, empty blocks every second), gRPC on an ephemeral port; load generators are separate processes on the same 2 cores.`,
    `- Requests/s: ${ROUNDS} interleaved rounds of ${SECONDS} s after an untimed warm-up round, median (range). JSON-RPC and gRPC-Web: \`wrk -t1 -c32\` on the API port (HTTP/1.1, keep-alive). gRPC: \`h2load -t1 -c${H2.clients} -m${H2.streams}\` (HTTP/2, 32 calls in flight, @grpc/grpc-js server). Equivalents: GetBlock{height ${BLOCK_HEIGHT}} vs eth_getBlockByNumber("0x${BLOCK_HEIGHT.toString(16)}", false); GetBalance vs eth_getBalance(latest) (GetBalance also answers the pending nonce, which JSON-RPC needs a second call for). Every answer is checked once before the load.`,
    '',
    '| Workload | JSON-RPC | gRPC-Web | gRPC (HTTP/2) | gRPC-Web / JSON-RPC | gRPC / JSON-RPC |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `"µs CPU/req" is the serving process's CPU time (user + system, all threads) per answered request: the cost of a request, which the machine's load changes far less than requests/s. Requests/s of the cheap workloads are bounded by the load generator sharing the 2 cores (the node is idle part of the time under wrk).`,
    '',
    'References, same rounds, each stack alone in its own process with no node logic:',
    '',
    `- the HTTP/1.1 stack JSON-RPC and gRPC-Web share (bench/http-bare-server.ts: uWS parsing the body and answering a constant JSON-RPC result), wrk as above: ${cellText(ceiling)};`,
    `- @grpc/grpc-js with the node's server options and a handler answering a constant 80-byte message at once (bench/grpc-bare-server.ts), h2load as above: ${cellText(ceilingGrpc)};`,
    `- node:http2 alone answering the same message and grpc-status trailer by hand: ${cellText(ceilingH2)};`,
    `- GetBalance over gRPC the way a gRPC client sends it, one connection with 32 streams (\`h2load -c${H2_ONE_CHANNEL.clients} -m${H2_ONE_CHANNEL.streams}\`): ${cellText(oneChannel)}.`,
    '',
    'gRPC-Web and JSON-RPC both pay the uWS stack per request, so gRPC-Web cannot exceed the stack alone; gRPC over HTTP/2 cannot exceed grpc-js answering a constant, nor node:http2 under it.',
    '',
    `StreamEvents fan-out: ${f.streams} subscribers (StreamEvents, no filter) in one other process over ${FANOUT_CONNECTIONS} HTTP/2 connections; delay from the node's finalized-block event to each subscriber's arrival, ${f.blocks} blocks after ${FANOUT_WARMUP_BLOCKS} warm-up blocks once all were subscribed: ${f.deliveries.toLocaleString('en-US')} of ${f.expected.toLocaleString('en-US')} deliveries, p50 ${f.p50.toFixed(1)} ms, p95 ${f.p95.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms, max ${f.max.toFixed(1)} ms${f.why === 'done' ? '' : ` (client ended by ${f.why})`}; p95 with the warm-up blocks ${f.p95FromSubscription.toFixed(1)} ms. Per block (medians): the first subscriber has it after ${f.firstMs.toFixed(1)} ms; the node uses ${f.nodeCpuMs.toFixed(1)} ms of CPU per block (making it included), the subscribers' process ${f.clientCpuMs.toFixed(1)} ms.`,
    '',
    'Goals:',
    '',
    goal('GetBlock'),
    goal('GetBalance'),
    cost('GetBlock'),
    cost('GetBalance'),
    `- StreamEvents fan-out to ${f.streams} subscribers, delivery p95 <= 50 ms: ${f.p95.toFixed(1)} ms -> ${f.p95 <= 50 && f.deliveries === f.expected ? 'met' : 'MISSED'}`,
    ...(o.h2load ? [] : ['', 'h2load (Debian nghttp2-client) is not installed: the gRPC (HTTP/2) column is n/a.']),
    '',
  ];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-grpc-'));
  const load0 = loadavg()[0];
  const node = await NativeNode.start(
    {
      ...parseConfig(['--dev'], {}),
      apiPort: 0,
      grpcPort: 0,
      dataDir: join(dir, 'data'),
      httpBackend: 'uws',
      maxConcurrent: 100_000,
      rateLimitGlobal: 0,
      rateLimitWrite: 0,
      logLevel: 'silent',
    },
    pino({ level: 'silent' }),
  );
  try {
    while (node.ctx.chain.height < BLOCK_HEIGHT + 1) await new Promise((r) => setTimeout(r, 100));
    const only = process.env.BENCH_GRPC_ONLY;
    log(`requests/s (${ROUNDS} rounds of ${SECONDS} s) ...`);
    const { cells, h2load } = only === 'fanout' ? { cells: [], h2load: true } : await loadBench(node, dir);
    if (only === 'requests') {
      // A partial run (profiling): medians printed, RESULTS.md untouched.
      for (const c of cells)
        log(`${c.workload} ${c.transport}: median ${fmt(median(c.rps))} req/s, ${median(c.cpuUs).toFixed(1)} µs CPU/request`);
      log(`1-min load average ${load0.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`);
      return;
    }
    log(`StreamEvents fan-out to ${FANOUT_STREAMS} subscribers, ${FANOUT_BLOCKS} blocks ...`);
    const fanout = await fanoutBench(node);
    const lines = section({
      cells,
      h2load,
      fanout,
      load: { before: load0, after: loadavg()[0] },
      date: new Date().toISOString(),
    });
    log(lines.join('\n'));
    if (process.env.BENCH_GRPC_WRITE !== '0') {
      writeResultsSection(SECTION, lines);
      log(`wrote ${RESULTS_FILE}`);
    }
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
