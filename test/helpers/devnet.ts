/**
 * Real node processes on 127.0.0.1 for the network tests: a network written by the testnet generator,
 * each node started with the exact `start` command of nodes.json, killed with SIGKILL or stopped with
 * SIGTERM, and queried over its API. The network tests own the port range 26000-29999 (below Linux's
 * ephemeral range, where outgoing connections could take a port first); other tests use ephemeral ports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import type { TestnetNode } from '../../ts/node/index.js';
import { rpcOk } from './evm.js';
import { httpJson } from './node.js';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));

/** The network tests' ports: bases 26000, 26300, ... (a base uses P+i, P+100+i, P+200+i for i < 99). */
const PORT_RANGE = { from: 26_000, to: 29_999, step: 300 };
/** Offset of a base's lock port: held by the test process that took the base, used by no node. */
const LOCK_OFFSET = 299;

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Listen on a port for the rest of this process's life (the kernel releases it when the process ends). */
async function holdPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => {
      s.unref();
      resolve(true);
    });
  });
}

/**
 * A base port whose API (P+i), P2P (P+100+i) and gRPC (P+200+i) ports are free for n nodes. The base is
 * taken by listening on its lock port (P+299) until this process ends: test files run in parallel
 * worker processes, and two that checked the same free range at once would both start nodes on it.
 */
export async function freeBasePort(n: number): Promise<number> {
  if (n >= LOCK_OFFSET - 200) throw new Error(`at most ${LOCK_OFFSET - 201} nodes per base`);
  const slots = Math.floor((PORT_RANGE.to - PORT_RANGE.from + 1) / PORT_RANGE.step);
  const start = Math.floor(Math.random() * slots);
  for (let i = 0; i < slots; i++) {
    const base = PORT_RANGE.from + ((start + i) % slots) * PORT_RANGE.step;
    if (!(await holdPort(base + LOCK_OFFSET))) continue;
    const ports = Array.from({ length: n }, (_, j) => [base + j, base + 100 + j, base + 200 + j]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free port range in 26000-29999');
}

export interface Running {
  node: TestnetNode;
  proc: ChildProcess;
  logs: string[];
}

const PENALTY_LINE = /"msg":"peer penalized"/;
/**
 * Every penalty line any node started by this process logged, whole and across restarts (`logs` drops its
 * oldest chunks, and a restarted node gets a new Running).
 */
const penaltyLines: { node: string; line: string }[] = [];

/** Start a node with its nodes.json `start` command (from the repository root), plus extra arguments. */
export function startNode(node: TestnetNode, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Running {
  const argv = [...node.start.split(' ').filter(Boolean), ...extra];
  const proc = spawn(process.execPath, argv.slice(1), {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NATIVE_LOG_LEVEL: 'info', ...env },
  });
  const logs: string[] = [];
  let partial = '';
  // NATIVE_TEST_LOG_DIR keeps every node's whole log in that dir (named <network dir>-<name>.log; restarts append).
  const dir = process.env.NATIVE_TEST_LOG_DIR;
  const file = dir ? join(dir, `${basename(dirname(node.data_dir))}-${node.name}.log`) : null;
  if (dir) mkdirSync(dir, { recursive: true });
  const keep = (d: Buffer) => {
    logs.push(d.toString());
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (PENALTY_LINE.test(line)) penaltyLines.push({ node: node.name, line });
    if (logs.length > 4000) logs.splice(0, 1000);
    if (file) appendFileSync(file, d);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  return { node, proc, logs };
}

export const exited = (r: Running): boolean => r.proc.exitCode !== null || r.proc.signalCode !== null;

/** Stop a node: SIGKILL (a crash) or SIGTERM (a clean stop), and wait for the process to end. */
export async function stopNode(r: Running, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
  if (exited(r)) return;
  const done = new Promise<void>((resolve) => r.proc.once('exit', () => resolve()));
  r.proc.kill(signal);
  const timer = setTimeout(() => r.proc.kill('SIGKILL'), 20_000);
  await done;
  clearTimeout(timer);
}

export const stopAll = (rs: Running[]): Promise<void> => Promise.all(rs.map((r) => stopNode(r))).then(() => undefined);

/** The node's head height, or -1 while it does not answer. */
export async function height(url: string): Promise<number> {
  try {
    return (await httpJson(`${url}/native_status`)).body.sync_info.latest_block_height as number;
  } catch {
    return -1;
  }
}

export const heights = (urls: string[]): Promise<number[]> => Promise.all(urls.map(height));

/** Block hashes [from, to] of a node, read in pages of 100 (newest-first pages of /chain/blocks). */
export async function hashes(url: string, from: number, to: number): Promise<Map<number, { hash: string; just: boolean }>> {
  const out = new Map<number, { hash: string; just: boolean }>();
  const head = await height(url);
  for (let page = 0; ; page++) {
    const r = await httpJson(`${url}/chain/blocks?page=${page}&limit=100`);
    const blocks = r.body.blocks as { index: number; hash: string; has_justification: boolean }[];
    for (const b of blocks) if (b.index >= from && b.index <= to) out.set(b.index, { hash: b.hash, just: b.has_justification });
    if (blocks.length === 0 || blocks[blocks.length - 1].index <= from || head - (page + 1) * 100 < from) break;
  }
  return out;
}

/**
 * Every height 1..upTo has the same block hash on every node (what a node has committed is final, so
 * agreement on every committed height is agreement on finality); BFT heights carry a certificate.
 */
export async function assertAgree(t: ExecutionContext, urls: string[], upTo: number, bftFrom: number): Promise<void> {
  const all = await Promise.all(urls.map((u) => hashes(u, 1, upTo)));
  let bad = 0;
  for (let h = 1; h <= upTo; h++) {
    const seen = all.map((m) => m.get(h));
    if (seen.some((x) => !x)) {
      t.fail(`height ${h} missing on a node`);
      return;
    }
    if (new Set(seen.map((x) => x?.hash)).size !== 1 && bad++ < 3)
      t.fail(`height ${h} differs: ${seen.map((x) => x?.hash).join(' ')}`);
    if (h >= bftFrom && seen.some((x) => !x?.just) && bad++ < 3) t.fail(`height ${h} has no commit certificate on a node`);
  }
  t.is(bad, 0, `${urls.length} nodes agree on heights 1..${upTo}`);
}

/** The last lines a node logged (for failure messages). */
export const tail = (r: Running, lines = 40): string => r.logs.join('').split('\n').slice(-lines).join('\n');

/** One line of a node's state: process, head, consensus position and peers (failure diagnostics). */
export async function nodeState(r: Running): Promise<string> {
  const name = r.node.name;
  if (exited(r)) return `${name}: exited (code ${r.proc.exitCode}, signal ${r.proc.signalCode})`;
  try {
    const s = (await httpJson(`${r.node.api_url}/native_status`)).body;
    const c = s.consensus_state;
    const y = s.sync_info;
    // The lock and valid rounds tell a height stalled on locks (rounds run on, nil precommits) apart.
    const bft = await rpcOk(r.node.api_url, 'native_getBftStatus').catch(() => null);
    return (
      `${name}: head ${y.latest_block_height}, deciding ${c.height} (${c.phase}) round ${c.round} step ${c.step} ` +
      `locked_round ${bft?.locked_round ?? '-'} valid_round ${bft?.valid_round ?? '-'} ` +
      `proposer ${c.proposer}, peers ${y.peers}, target ${y.target_height}, catching_up ${y.catching_up}`
    );
  } catch (err) {
    return `${name}: running (pid ${r.proc.pid}) but its API does not answer: ${(err as Error).message}`;
  }
}

/**
 * Every node's state and the tail of its log, for a failed wait: enough to tell a stalled round, a node
 * that never connected or one that crashed from CI output alone.
 */
export async function diagnose(rs: (Running | null)[], lines = 30): Promise<string> {
  const live = rs.filter((r): r is Running => r !== null);
  const states = await Promise.all(live.map(nodeState));
  const logs = live.map((r) => `--- ${r.node.name} log tail ---\n${tail(r, lines)}`);
  return [`network state at ${new Date().toISOString()}:`, ...states, ...logs].join('\n');
}

/** Node i's multiaddr (/ip4/…/tcp/…/p2p/<id>), read from another node's static peer list in nodes.json. */
export function multiaddrOf(nodes: TestnetNode[], i: number): string {
  const other = nodes[(i + 1) % nodes.length];
  const argv = other.start.split(' ');
  const peers = argv[argv.indexOf('--peers') + 1].split(',');
  const found = peers.find((p) => p.includes(`/tcp/${nodes[i].p2p_port}/`));
  if (!found) throw new Error(`no multiaddr for ${nodes[i].name}`);
  return found;
}

/** Every node's libp2p peer id, mapped to its name (from the static peer lists of nodes.json). */
export function devnetPeerIds(nodes: TestnetNode[]): Map<string, string> {
  const ids = new Map<string, string>();
  nodes.forEach((n, i) => {
    const id = /\/p2p\/(\w+)$/.exec(multiaddrOf(nodes, i))?.[1];
    if (id) ids.set(id, n.name);
  });
  return ids;
}

/**
 * Penalties one devnet node gave another (each node logs every penalty as one JSON line, 'peer
 * penalized', with the peer id; docs/p2p.md): the invariant "no honest node is ever scored down by
 * another honest node". Returns the offending lines, as "<node>: <line>".
 */
export function honestPenalties(nodes: TestnetNode[]): string[] {
  const honest = devnetPeerIds(nodes);
  const names = new Set(nodes.map((n) => n.name));
  const found: string[] = [];
  for (const { node, line } of penaltyLines) {
    if (!names.has(node)) continue;
    let peer: unknown;
    try {
      peer = (JSON.parse(line) as { peer?: unknown }).peer;
    } catch {
      continue;
    }
    if (typeof peer === 'string' && honest.has(peer)) found.push(`${node} penalized ${honest.get(peer)}: ${line}`);
  }
  return found;
}

/** Penalty lines a node logged (any peer), for tests that expect an attacker to be penalized. */
export const penaltiesBy = (node: TestnetNode): string[] => penaltyLines.filter((p) => p.node === node.name).map((p) => p.line);

/** Fail the test when any devnet node penalized another (see honestPenalties). */
export function assertNoHonestPenalties(t: ExecutionContext, nodes: TestnetNode[]): void {
  const found = honestPenalties(nodes);
  t.deepEqual(found.slice(0, 5), [], `${found.length} penalties between honest nodes`);
}
