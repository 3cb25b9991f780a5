import test from 'ava';
import { ethers } from 'ethers';
import WebSocket from 'ws';
import { ChainEventFeed } from '../../ts/events/index.js';
import { ConnectionSubscriptions } from '../../ts/rpc/index.js';
import { MAX_SUBSCRIPTION_QUEUE } from '../../ts/rpc/subscriptions.js';
import { compiled } from '../helpers/contracts.js';
import { ethersProvider, ethersWallet, rpc, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const iface = new ethers.Interface(compiled('Box').abi);

/** A raw JSON-RPC WebSocket client that records every frame it gets. */
class WsClient {
  readonly frames: any[] = [];
  private nextId = 1;
  closed: { code: number } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.frames.push(JSON.parse(String(data))));
    ws.on('close', (code) => (this.closed = { code }));
    ws.on('error', () => undefined);
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new WsClient(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(method: string, params: unknown[] = []): number {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return id;
  }

  async call(method: string, params: unknown[] = []): Promise<any> {
    const id = this.send(method, params);
    const frame = await waitFor(() => this.frames.find((f) => f.id === id), 30_000, `answer to ${method}`);
    if (frame.error) throw new Error(`${method}: ${frame.error.code} ${frame.error.message}`);
    return frame.result;
  }

  notifications(sub: string): any[] {
    return this.frames
      .filter((f) => f.method === 'eth_subscription' && f.params.subscription === sub)
      .map((f) => f.params.result);
  }

  close(): void {
    this.ws.terminate();
  }
}

const wsUrl = (n: TestNode, path = '/rpc') => `${n.url.replace('http', 'ws')}${path}`;

for (const backend of ['uws', 'node'] as const) {
  test(`${backend}: WebSocket JSON-RPC serves every method; newHeads in order; unsubscribe stops them`, async (t) => {
    const n = await startTestNode({ httpBackend: backend });
    t.teardown(() => n.stop());
    t.is(n.node.http.backend, backend);
    const c = await WsClient.open(wsUrl(n));
    t.teardown(() => c.close());
    t.is(await c.call('eth_chainId'), '0x1bd0');
    t.is(await c.call('eth_getBalance', ['0x0000000000000000000000000000000000000001', 'latest']), '0x0');
    // A batch answers as over HTTP.
    c.ws.send(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'net_version' },
        { jsonrpc: '2.0', id: 'b', method: 'eth_nope' },
      ]),
    );
    const batch = await waitFor(() => c.frames.find((f) => Array.isArray(f)));
    t.is(batch[0].result, '7120');
    t.is(batch[1].error.code, -32601);

    const sub = await c.call('eth_subscribe', ['newHeads']);
    t.regex(sub, /^0x[0-9a-f]{32}$/);
    await waitFor(() => c.notifications(sub).length >= 5, 30_000, 'five heads');
    const heads = c.notifications(sub);
    const numbers = heads.map((h) => Number(h.number));
    numbers.forEach((v, i) => i > 0 && t.is(v, numbers[i - 1] + 1));
    t.is(heads[0].transactions, undefined);
    t.regex(heads[0].hash, /^0x[0-9a-f]{64}$/);
    t.is(heads[1].parentHash, heads[0].hash);
    // The head a notification announced is the one the node serves.
    const served = await c.call('eth_getBlockByNumber', [heads[2].number, false]);
    t.is(served.hash, heads[2].hash);

    t.true(await c.call('eth_unsubscribe', [sub]));
    t.false(await c.call('eth_unsubscribe', [sub]));
    const after = c.notifications(sub).length;
    const h = Number(await c.call('eth_blockNumber'));
    await waitFor(async () => Number(await c.call('eth_blockNumber')) >= h + 3, 30_000, 'three more blocks');
    t.is(c.notifications(sub).length, after);

    // The root path serves the same endpoint (ws://host:port, as anvil and Hardhat are addressed).
    const root = await WsClient.open(wsUrl(n, '/'));
    t.teardown(() => root.close());
    t.is(await root.call('eth_chainId'), '0x1bd0');
    // A plain GET / is still the discovery document.
    t.is((await fetch(`${n.url}/`)).status, 200);
    await waitFor(() => n.node.http.wsConnections() === 2);
  });
}

test('logs (with a filter) and newPendingTransactions (hashes and full) subscriptions; eth_subscribe over HTTP is refused', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 3, provider);
  const dep = await new ethers.ContractFactory(iface, compiled('Box').bytecode, w).getDeployTransaction(0n);
  const box = (await waitReceipt(n.url, (await w.sendTransaction(dep)).hash)).contractAddress as string;
  const c = await WsClient.open(wsUrl(n));
  t.teardown(() => c.close());
  const stored = iface.getEvent('Stored')!.topicHash;
  const logsSub = await c.call('eth_subscribe', ['logs', { address: box, topics: [stored] }]);
  const otherSub = await c.call('eth_subscribe', ['logs', { address: '0x0000000000000000000000000000000000000001' }]);
  const hashesSub = await c.call('eth_subscribe', ['newPendingTransactions']);
  const fullSub = await c.call('eth_subscribe', ['newPendingTransactions', true]);
  const nonce = await provider.getTransactionCount(w.address, 'pending');
  const sent: string[] = [];
  for (let i = 0; i < 4; i++) {
    const raw = await signCall(w, box, iface.encodeFunctionData('store', [BigInt(i + 1)]), nonce + i);
    sent.push(await rpcOk(n.url, 'eth_sendRawTransaction', [raw]));
  }
  await waitFor(() => c.notifications(logsSub).length >= 4, 30_000, 'four logs');
  const logs = c.notifications(logsSub);
  t.deepEqual(
    logs.map((l) => BigInt(l.topics[2])),
    [1n, 2n, 3n, 4n],
  );
  t.deepEqual(
    logs.map((l) => l.transactionHash),
    sent,
  );
  t.false(logs[0].removed);
  t.deepEqual(c.notifications(hashesSub), sent);
  t.deepEqual(
    c.notifications(fullSub).map((tx) => tx.hash),
    sent,
  );
  t.is(c.notifications(fullSub)[0].from, w.address.toLowerCase());
  t.deepEqual(c.notifications(otherSub), []);
  // Unknown kinds and bad filters are refused; over HTTP there is nothing to push to.
  await t.throwsAsync(c.call('eth_subscribe', ['syncingx']), { message: /-32601 no "syncingx" subscription in eth namespace/ });
  await t.throwsAsync(c.call('eth_subscribe', ['logs', { address: '0x1' }]), { message: /-32602/ });
  const http = await rpc(n.url, 'eth_subscribe', ['newHeads']);
  t.is(http.error?.code, -32601);
  t.is(http.error?.message, 'notifications not supported');
});

test('filters made over a WebSocket belong to the connection and go with it', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const c = await WsClient.open(wsUrl(n));
  const id = await c.call('eth_newBlockFilter');
  await waitFor(async () => (await c.call('eth_getFilterChanges', [id])).length > 0);
  t.is(n.node.ctx.filters?.size, 1);
  c.close();
  await waitFor(() => n.node.ctx.filters?.size === 0, 10_000, 'filters of the closed connection removed');
  t.pass();
});

for (const backend of ['uws', 'node'] as const) {
  test(`${backend}: a client that stops reading is dropped once its queue passes the limit; the node keeps serving`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, wsMaxBufferedBytes: 256 * 1024 });
    t.teardown(() => n.stop());
    const c = await WsClient.open(wsUrl(n));
    t.teardown(() => c.close());
    const sub = await c.call('eth_subscribe', ['newHeads']);
    await waitFor(() => c.notifications(sub).length > 0);
    // A contract whose code returns 1 MiB of memory: each eth_call answer is 2 MiB of hex.
    const provider = ethersProvider(n.url);
    t.teardown(() => provider.destroy());
    const runtime = '621000006000f3';
    const raw = await signCall(ethersWallet(n.url, 4, provider), null, `0x66${runtime}60005260076019f3`, 0);
    const big = (await waitReceipt(n.url, await rpcOk(n.url, 'eth_sendRawTransaction', [raw]))).contractAddress;
    t.is(await rpcOk(n.url, 'eth_getCode', [big, 'latest']), `0x${runtime}`);
    // Stop reading, then ask for those answers: they pile up in the kernel's buffers, then in the server's
    // queue, until the server drops the connection.
    (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let i = 0; i < 40; i++) c.send('eth_call', [{ to: big, gas: '0x1000000' }, 'latest']);
    await waitFor(() => n.node.http.wsConnections() === 0, 60_000, 'the slow client to be dropped');
    (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await waitFor(() => c.closed, 30_000, 'the client to see the close');
    // Everyone else is unaffected.
    const other = await WsClient.open(wsUrl(n));
    t.teardown(() => other.close());
    t.is(await other.call('eth_chainId'), '0x1bd0');
  });
}

test('a subscription that falls its queue behind drops the connection (never an unbounded buffer)', async (t) => {
  const feed = new ChainEventFeed();
  let dropped: string | null = null;
  const sent: string[] = [];
  const subs = new ConnectionSubscriptions({
    send: (text) => {
      sent.push(text);
      return true;
    },
    drop: (reason) => {
      dropped = reason;
    },
  });
  const ctx = { events: feed, chain: { params: { chainId: 7120, evmHardfork: 'prague' } } } as never;
  const id = subs.subscribe(ctx, ['newPendingTransactions']);
  subs.arm(id);
  // More events than the queue holds, in one tick (before the subscription's pump runs).
  for (let i = 0; i <= MAX_SUBSCRIPTION_QUEUE + 10; i++) {
    feed.pendingTransaction({ txid: i.toString(16).padStart(64, '0') } as never);
  }
  await waitFor(() => dropped !== null);
  t.regex(dropped ?? '', /lagged 11 events behind/);
  t.is(sent.length, 0);
  subs.closeAll();
  t.is(feed.listenerCount, 0);
});

test('the upgrade is checked like POST /rpc: API key (401), origin (403); no WebSocket when it is off', async (t) => {
  const key = 'k'.repeat(20);
  const n = await startTestNode({ apiKey: key, corsOrigin: 'https://app.example' });
  t.teardown(() => n.stop());
  await t.throwsAsync(WsClient.open(wsUrl(n)), { message: 'HTTP 401' });
  await t.throwsAsync(WsClient.open(wsUrl(n), { 'x-api-key': key, origin: 'https://evil.example' }), { message: 'HTTP 403' });
  const ok = await WsClient.open(wsUrl(n), { 'x-api-key': key, origin: 'https://app.example' });
  t.teardown(() => ok.close());
  t.is(await ok.call('eth_chainId'), '0x1bd0');
  const off = await startTestNode({ ws: false });
  t.teardown(() => off.stop());
  await t.throwsAsync(WsClient.open(wsUrl(off)));
});
