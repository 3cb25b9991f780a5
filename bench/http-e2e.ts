import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGenesisFile } from '../ts/chain/genesis.js';
import { type KeyPair, randomKeyPair } from '../ts/ledger/keys.js';
import { saveValidatorKey } from '../ts/node/validator-key.js';
import { stringifyExact } from '../ts/util/json.js';
import { benchChainParams, senderKeys, signedTransfers } from './fixtures.js';
import { type Server, processCpuMs, startNative, stopServer } from './http-load-procs.js';
import type { Row } from './ledger.js';

function post(agent: Agent, port: number, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * HTTP/1.1 pipelining over one raw socket: writes every request up front (in windows of `depth`)
 * and counts 200 responses. Responses come back in request order, so one connection may carry
 * several senders' nonce sequences safely.
 */
function pipelined(port: number, bodies: string[], depth: number): Promise<{ ok: number; failed: number }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let sent = 0;
    let answered = 0;
    let ok = 0;
    let buf = '';
    const pump = (): void => {
      let chunk = '';
      while (sent < bodies.length && sent - answered < depth) {
        const b = bodies[sent++];
        chunk += `POST /transactions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
      }
      if (chunk) sock.write(chunk);
    };
    sock.setEncoding('latin1');
    sock.on('connect', pump);
    sock.on('error', reject);
    sock.on('close', () =>
      answered < bodies.length ? reject(new Error(`connection closed after ${answered} responses`)) : undefined,
    );
    sock.on('data', (d: string) => {
      buf += d;
      for (;;) {
        const head = buf.indexOf('\r\n\r\n');
        if (head < 0) break;
        const m = /content-length: (\d+)/i.exec(buf.slice(0, head));
        const len = m ? Number(m[1]) : 0;
        if (buf.length < head + 4 + len) break;
        if (buf.startsWith('HTTP/1.1 200')) ok++;
        buf = buf.slice(head + 4 + len);
        answered++;
      }
      if (answered === bodies.length) {
        sock.end();
        resolve({ ok, failed: answered - ok });
      } else pump();
    });
  });
}

/**
 * Keep-alive lanes without node:http: one raw socket per lane, one request in flight on it (the same
 * traffic as an Agent with one socket per sender), so the client spends ~10x less CPU per request than
 * node:http's client and leaves the shared cores to the node under test. An answer counts as accepted when
 * it is a 200 without an `"error":` member (a JSON-RPC error also comes with 200).
 */
export function rawLane(port: number, bodies: string[], path = '/transactions'): Promise<{ ok: number; failed: string[] }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    let next = 0;
    let ok = 0;
    const failed: string[] = [];
    let buf = '';
    const send = (): void => {
      const b = bodies[next++];
      sock.write(
        `POST ${path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`,
      );
    };
    sock.setEncoding('latin1');
    sock.on('connect', () => {
      if (bodies.length) return send();
      sock.end();
      resolve({ ok, failed });
    });
    sock.on('error', reject);
    sock.on('data', (d: string) => {
      buf += d;
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const m = /content-length: (\d+)/i.exec(buf.slice(0, head));
      const len = m ? Number(m[1]) : 0;
      if (buf.length < head + 4 + len) return;
      const answer = buf.slice(head + 4, head + 4 + len);
      if (buf.startsWith('HTTP/1.1 200') && !answer.includes('"error":')) ok++;
      else failed.push(`${buf.slice(9, 12)} ${answer.slice(0, 100)}`);
      buf = buf.slice(head + 4 + len);
      if (next < bodies.length) send();
      else {
        sock.end();
        resolve({ ok, failed });
      }
    });
  });
}

async function getJson(port: number, path: string): Promise<any> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return r.json();
}

/**
 * Our node in its own process (as in production) on the bench chain (id 7120, `keys` funded, one validator),
 * rate limits off, no per-sender pending cap; the caller stops it and removes `dir`.
 */
export async function startBenchChainNode(
  backend: 'uws' | 'node',
  keys: KeyPair[],
  nodeArgs: string[] = [],
  main?: string,
): Promise<{ server: Server; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-http-'));
  const validator = randomKeyPair();
  saveValidatorKey(dir, validator);
  const genesis = join(dir, 'genesis.json');
  writeGenesisFile(genesis, benchChainParams(validator, keys));
  try {
    const args = ['--genesis', genesis, '--max-pending-per-sender', '100000', ...nodeArgs];
    return { server: await startNative(backend, dir, args, main), dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * End-to-end: the node runs as its own process (as in production); this process is the single
 * client, with one keep-alive connection per sender ("lane") so each sender's nonces arrive in order.
 * Measured from the first submission until every transaction is in a committed block.
 */
const signedCache = new Map<string, ReturnType<typeof signedTransfers>>();

/** One run's numbers (for medians over runs). */
export interface SubmissionStats {
  acceptedPerSec: number;
  includedPerSec: number;
  /** CPU microseconds per transaction (Linux only). */
  nodeCpuUs?: number;
  clientCpuUs?: number;
}

export type SubmissionClient = 'keep-alive lanes' | 'raw keep-alive lanes' | 'pipelined';

export async function benchHttpSubmission(
  backend: 'uws' | 'node',
  lanes = 64,
  perSender = 160,
  mode: SubmissionClient = 'keep-alive lanes',
  opts: {
    main?: string;
    label?: string;
    onStats?: (s: SubmissionStats) => void;
    nodeArgs?: string[];
    /** Every JSON log line of the node (blocks produced, the journal's counts at stop), parsed. */
    onLog?: (entry: Record<string, unknown>) => void;
  } = {},
): Promise<Row[]> {
  const keys = senderKeys(lanes);
  // Deterministic keys and signatures: every run of a size submits the same transactions (signed once).
  const cacheKey = `${lanes}x${perSender}`;
  let txs = signedCache.get(cacheKey);
  if (!txs) signedCache.set(cacheKey, (txs = signedTransfers(keys, perSender, 7120)));
  const { server, dir } = await startBenchChainNode(backend, keys, opts.nodeArgs, opts.main);
  const { port } = server;
  const logEnded = opts.onLog ? followLog(server.child, opts.onLog) : Promise.resolve();
  try {
    const startHeight = (await getJson(port, '/native_status')).sync_info.latest_block_height as number;
    const agent = new Agent({ keepAlive: true, maxSockets: lanes });
    const bodies = keys.map((_, lane) =>
      txs.filter((_, i) => i % lanes === lane).map((tx) => stringifyExact({ transaction: tx })),
    );
    let accepted = 0;
    const rejected = new Map<string, number>();
    const cpu0 = process.cpuUsage();
    const nodeCpu0 = processCpuMs(server.child.pid);
    const t0 = performance.now();
    if (mode === 'raw keep-alive lanes') {
      const rs = await Promise.all(bodies.map((list) => rawLane(port, list)));
      for (const r of rs) {
        accepted += r.ok;
        for (const f of r.failed) rejected.set(f, (rejected.get(f) ?? 0) + 1);
      }
    } else if (mode === 'pipelined') {
      // 4 connections, each carrying a quarter of the senders (their txs interleaved by nonce).
      const conns = Array.from({ length: 4 }, (_, c) => {
        const mine = bodies.filter((_, lane) => lane % 4 === c);
        const merged: string[] = [];
        for (let i = 0; i < perSender; i++) for (const list of mine) merged.push(list[i]);
        return merged;
      });
      // 4 x 100 in flight stays under the default 500-request concurrency cap.
      const rs = await Promise.all(conns.map((list) => pipelined(port, list, 100)));
      for (const r of rs) {
        accepted += r.ok;
        if (r.failed) rejected.set('non-200', (rejected.get('non-200') ?? 0) + r.failed);
      }
    } else {
      await Promise.all(
        bodies.map(async (list) => {
          for (const body of list) {
            const r = await post(agent, port, '/transactions', body);
            if (r.status === 200) accepted++;
            else
              rejected.set(`${r.status} ${r.text.slice(0, 60)}`, (rejected.get(`${r.status} ${r.text.slice(0, 60)}`) ?? 0) + 1);
          }
        }),
      );
    }
    const t1 = performance.now();
    for (;;) {
      const pool = await getJson(port, '/mempool');
      if (pool.size === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const t2 = performance.now();
    const clientCpu = process.cpuUsage(cpu0);
    const nodeCpu1 = processCpuMs(server.child.pid);
    agent.destroy();
    const endHeight = (await getJson(port, '/native_status')).sync_info.latest_block_height as number;
    const rej = [...rejected].map(([k, v]) => `${v}x ${k}`).join('; ');
    const perTx = (ms: number) => `${((ms * 1000) / txs.length).toFixed(0)} µs`;
    const cpuNote =
      nodeCpu0 !== undefined && nodeCpu1 !== undefined
        ? `; CPU per tx: node ${perTx(nodeCpu1 - nodeCpu0)}, client ${perTx((clientCpu.user + clientCpu.system) / 1000)}`
        : '';
    const who = `${backend}, ${mode}${opts.label ? `, ${opts.label}` : ''}`;
    opts.onStats?.({
      acceptedPerSec: accepted / ((t1 - t0) / 1000),
      includedPerSec: accepted / ((t2 - t0) / 1000),
      nodeCpuUs: nodeCpu0 !== undefined && nodeCpu1 !== undefined ? ((nodeCpu1 - nodeCpu0) * 1000) / txs.length : undefined,
      clientCpuUs: ((clientCpu.user + clientCpu.system) / 1000 / txs.length) * 1000,
    });
    return [
      {
        name: `HTTP submission [${who}]: ${txs.length.toLocaleString()} signed transfers from ${lanes} senders, node in its own process`,
        value: `${Math.round(accepted / ((t1 - t0) / 1000)).toLocaleString()} tx/s accepted`,
        note: `${accepted} accepted${rej ? `, rejected: ${rej}` : ''}`,
      },
      {
        name: `HTTP submission -> inclusion [${who}]`,
        value: `${Math.round(accepted / ((t2 - t0) / 1000)).toLocaleString()} tx/s`,
        note: `all included in ${endHeight - startHeight} blocks within ${((t2 - t0) / 1000).toFixed(2)} s (1 s blocks bound the tail)${cpuNote}`,
      },
    ];
  } finally {
    await stopServer(server.child);
    await logEnded;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Parses the child's JSON log lines into `onLine`; resolves when its stdout ends. */
function followLog(child: ChildProcess, onLine: (entry: Record<string, unknown>) => void): Promise<void> {
  let buf = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
      if (!line.startsWith('{')) continue;
      try {
        onLine(JSON.parse(line));
      } catch {
        /* not a log line */
      }
    }
  });
  return new Promise((resolve) => (child.stdout ? child.stdout.once('close', () => resolve()) : resolve()));
}
