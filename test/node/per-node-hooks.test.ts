/**
 * Two nodes in one process share no hook: each counts only its own JSON-RPC calls (POST and WebSocket), each
 * logs only its own failures, and a start that fails half-way stops every part it had built (port, database).
 */
import { createServer } from 'node:net';
import test from 'ava';
import { pino } from 'pino';
import WebSocket from 'ws';
import { apiRoutes, createApiHandler, rpcDispatchers } from '../../ts/api/index.js';
import { startHttpServer } from '../../ts/http/index.js';
import { NativeNode, type NodeConfig, parseConfig } from '../../ts/node/index.js';
import type { NetworkView, NodeContext } from '../../ts/services/index.js';
import { TEST_NODE_ENV, type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** A node's JSON-RPC calls of `method` that answered, as its own /metrics counts them. */
async function countedCalls(n: TestNode, method: string): Promise<number> {
  const text = await (await fetch(`${n.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`native_rpc_calls_total{method="${method}",outcome="ok"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const r = await httpJson(`${url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method, params } });
  return r.body;
}

/** One call over WebSocket on a fresh connection. */
async function wsCall(url: string, method: string): Promise<unknown> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/rpc`);
  try {
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const answer = new Promise<unknown>((resolve) => ws.once('message', (d) => resolve(JSON.parse(String(d)))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: [] }));
    return await answer;
  } finally {
    ws.terminate();
  }
}

test('two nodes in one process: each counts only its own JSON-RPC calls, over POST and WebSocket', async (t) => {
  const [a, b] = await Promise.all([startTestNode(), startTestNode()]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  for (let i = 0; i < 3; i++) t.truthy((await rpc(a.url, 'eth_chainId')).result);
  for (let i = 0; i < 2; i++) t.truthy((await rpc(b.url, 'eth_chainId')).result);
  for (let i = 0; i < 3; i++) t.like(await wsCall(b.url, 'eth_chainId'), { id: 7, result: '0x1bd0' });
  t.is(await countedCalls(a, 'eth_chainId'), 3);
  t.is(await countedCalls(b, 'eth_chainId'), 5);
});

/** A network whose host went down: every read of it fails (not a NodeError: an internal error of the API). */
function downNetwork(): NetworkView {
  const down = (): never => {
    throw new Error('p2p host is down');
  };
  return {
    peerId: 'down',
    peers: down,
    catchingUp: down,
    targetHeight: down,
    syncing: down,
    bestProvenPeerHeight: down,
    evidence: down,
    lastFinalizedAt: down,
    blocksImported: down,
  };
}

test('two API handlers over real HTTP: each JSON-RPC internal error reaches only its own hooks', async (t) => {
  const n = await startTestNode();
  t.teardown(n.stop);
  const seen = { a: [] as string[], b: [] as string[] };
  const calls = { a: 0, b: 0 };
  const serve = async (name: 'a' | 'b', ctx: NodeContext) => {
    const rpc = rpcDispatchers({
      onCall: () => calls[name]++,
      onInternalError: (err, method) => seen[name].push(`${method}: ${(err as Error).message}`),
    });
    const handler = createApiHandler(ctx, apiRoutes({ rpc, onExplorerError: (_err, path) => seen[name].push(path) }));
    const http = await startHttpServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) }, handler);
    t.teardown(() => http.close());
    return `http://127.0.0.1:${http.port}`;
  };
  // Handler A serves the node's context with its network down; B the same node as it is.
  const urlA = await serve('a', { ...n.node.ctx, network: downNetwork() });
  const urlB = await serve('b', n.node.ctx);
  const failed = await rpc(urlA, 'net_peerCount');
  t.is(failed.error?.message, 'internal error');
  t.is((await rpc(urlB, 'net_peerCount')).result, '0x0');
  t.is((await rpc(urlB, 'eth_chainId')).result, '0x1bd0');
  t.deepEqual(seen, { a: ['net_peerCount: p2p host is down'], b: [] });
  t.deepEqual(calls, { a: 1, b: 2 });
});

/** A port free now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Whether `port` on 127.0.0.1 can be bound now. */
async function bindable(port: number): Promise<boolean> {
  const s = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise((resolve) => s.close(resolve));
  return ok;
}

test('a start that fails after the API listened stops what it built: the API port and the database are free again', async (t) => {
  const busy = await startTestNode();
  t.teardown(busy.stop);
  const dir = tempDir();
  t.teardown(dir.cleanup);
  const apiPort = await freePort();
  const config: NodeConfig = {
    ...parseConfig(['--dev'], TEST_NODE_ENV),
    apiPort,
    dataDir: dir.dir,
    blockTimeMs: 200,
    // gRPC listens after the API: on the other node's port it fails, with the API already listening.
    grpcPort: busy.node.http.port,
  };
  const lines: { msg?: string }[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  await t.throwsAsync(NativeNode.start(config, log));
  t.false(lines.some((l) => l.msg === 'API listening'));
  t.true(await waitFor(() => bindable(apiPort), 30_000, 'the API port released'));
  // The database lock is released too: the same data dir starts (gRPC off this time).
  const again = await NativeNode.start({ ...config, grpcPort: null }, pino({ level: 'silent' }));
  t.teardown(() => again.stop());
  t.is(again.http.port, apiPort);
});
