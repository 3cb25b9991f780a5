/**
 * Issue 26 sections 1 and 4 on both HTTP backends: GET /ready (thresholds, tightening query parameters,
 * 503 with reasons), HTTP/1.0 requests, cache headers (immutable blocks, transactions and at_height reads
 * with strong ETags and 304; no-store for head answers) and blocks by hash.
 */
import { connect } from 'node:net';
import test from 'ava';
import { etagMatches } from '../../ts/api/cache.js';
import { parseDurationMs, parseReadinessQuery, readiness } from '../../ts/services/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

/** One raw request on a fresh connection; resolves with everything the server sent before closing. */
function rawRequest(port: number, text: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; got ${JSON.stringify(out.slice(0, 200))}`));
    }, timeoutMs);
    s.on('data', (d) => {
      out += d.toString('latin1');
    });
    s.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    s.write(text);
  });
}

test('readiness query: tightening parameters parse; bad values are refused', (t) => {
  t.deepEqual(parseReadinessQuery(new URLSearchParams('max_lag_blocks=1&max_age=500ms&min_peers=2')), {
    maxLagBlocks: 1,
    maxAgeMs: 500,
    minPeers: 2,
  });
  t.is(parseDurationMs('10s'), 10_000);
  t.is(parseDurationMs('3'), 3000);
  t.is(parseDurationMs('1.5s'), 1500);
  t.is(parseDurationMs('ten'), null);
  t.throws(() => parseReadinessQuery(new URLSearchParams('max_lag_blocks=-1')), { message: /max_lag_blocks/ });
  t.throws(() => parseReadinessQuery(new URLSearchParams('max_age=soon')), { message: /max_age/ });
});

test('etag matching: list, weak prefix and * (RFC 9110 weak comparison for If-None-Match)', (t) => {
  t.true(etagMatches('"a", "b"', '"b"'));
  t.true(etagMatches('W/"b"', '"b"'));
  t.true(etagMatches('*', '"b"'));
  t.false(etagMatches('"c"', '"b"'));
  t.false(etagMatches(undefined, '"b"'));
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] GET /ready: 200 on a producing node; thresholds tighten per request; draining and age reasons; no key, no rate limit`, async (t) => {
    // A single-validator testnet node: blocks every 200 ms, spec rate limits (5 per window here).
    const n = await startTestNode({ httpBackend: backend, network: 'testnet', rateLimitGlobal: 5, readyMaxAgeMs: 10_000 });
    t.teardown(n.stop);
    await waitFor(async () => n.node.ctx.chain.height >= 1, 30_000, 'a block');
    const ok = await httpJson(`${n.url}/ready`);
    t.is(ok.status, 200, ok.text);
    t.deepEqual(ok.body, { ready: true, reasons: [] });
    t.is(ok.headers.get('cache-control'), 'no-store');
    // Tighter than the node: a head can never be 0 ms old.
    const tight = await httpJson(`${n.url}/ready?max_age=0`);
    t.is(tight.status, 503);
    t.false(tight.body.ready);
    t.regex(tight.body.reasons[0], /^head_age: head \d+ is [\d.]+s old \(max 0s\)$/);
    // A node without peers is judged on the rest, except when the request asks for peers.
    const peers = await httpJson(`${n.url}/ready?min_peers=1`);
    t.is(peers.status, 503);
    t.deepEqual(peers.body.reasons, ['peers: 0 connected (min 1)']);
    // Looser than the node is not looser: the configured threshold stays.
    n.node.ctx.readiness = { ...n.node.ctx.readiness!, maxAgeMs: 0 };
    const loose = await httpJson(`${n.url}/ready?max_age=3600s`);
    t.is(loose.status, 503);
    n.node.ctx.readiness = { ...n.node.ctx.readiness!, maxAgeMs: 10_000 };
    const bad = await httpJson(`${n.url}/ready?max_lag_blocks=x`);
    t.is(bad.status, 400);
    t.regex(bad.body.error, /max_lag_blocks/);
    // Draining: 503 at once, naming it.
    n.node.beginDrain();
    const draining = await httpJson(`${n.url}/ready`);
    t.is(draining.status, 503);
    t.deepEqual(draining.body, { ready: false, reasons: ['draining: the node is shutting down'] });
    // Every /ready above (9 so far) passed a 5-request rate limit: the balancer's checks are never refused.
    t.is((await httpJson(`${n.url}/ready`)).status, 503);
  });

  test(`[${backend}] readiness conditions: catching up and lag behind the best proven peer height`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, network: 'testnet', blockTimeMs: 60_000 });
    t.teardown(n.stop);
    const ctx = n.node.ctx;
    const h = ctx.chain.height;
    // A peer view as the sync layer reports it (the P2P tests cover the real one).
    ctx.network = {
      peerId: 'p',
      peers: () => [{ peer_id: 'q', address: '/ip4/127.0.0.1', direction: 'outbound', height: h + 812, score: 0 }],
      catchingUp: () => true,
      targetHeight: () => h + 812,
      syncing: () => ({ starting: h, current: h, highest: h + 812 }),
      bestProvenPeerHeight: () => h + 812,
      evidence: () => ({ pending: [], committed: [] }),
      lastFinalizedAt: () => Date.now(),
      blocksImported: () => 0,
    };
    const r = readiness(ctx, {}, ctx.chain.head.timestamp * 1000);
    t.false(r.ready);
    t.deepEqual(r.reasons, [
      'catching_up: 812 blocks behind',
      `lag: 812 blocks behind the best proven peer height ${h + 812} (max 2)`,
    ]);
    // Two blocks ahead of the live head (a block produced meanwhile must not shrink the lag under test).
    const ahead = () => ctx.chain.height + 2;
    ctx.network = { ...ctx.network, catchingUp: () => false, targetHeight: ahead, syncing: () => null, bestProvenPeerHeight: ahead };
    t.deepEqual(readiness(ctx, {}, ctx.chain.head.timestamp * 1000), { ready: true, reasons: [] });
    t.deepEqual(readiness(ctx, { maxLagBlocks: 1 }, ctx.chain.head.timestamp * 1000).reasons, [
      `lag: 2 blocks behind the best proven peer height ${ctx.chain.height + 2} (max 1)`,
    ]);
    const res = await httpJson(`${n.url}/ready?max_lag_blocks=1`);
    t.is(res.status, 503);
    t.regex(res.body.reasons.join(), /lag: 2 blocks behind/);
  });

  test(`[${backend}] HTTP/1.0 requests are answered (HAProxy's default check, monitoring probes)`, async (t) => {
    if (backend === 'uws') {
      // uWebSockets.js 20.30 (the build this project can use) never parses an HTTP/1.0 request line: it
      // waits for its idle timeout. docs/operations.md, "HTTP/1.0"; the node backend answers them.
      t.log('uWS 20.30 cannot parse HTTP/1.0; checked that it does not answer, as documented');
      const n = await startTestNode({ httpBackend: backend });
      t.teardown(n.stop);
      await t.throwsAsync(rawRequest(n.node.http.port, 'GET /health HTTP/1.0\r\n\r\n', 1500), { message: /no answer/ });
      return;
    }
    const n = await startTestNode({ httpBackend: backend });
    t.teardown(n.stop);
    const port = n.node.http.port;
    const out = await rawRequest(port, 'GET /ready HTTP/1.0\r\n\r\n');
    t.regex(out, /^HTTP\/1\.[01] 200 /);
    t.regex(out, /\r\n\r\n\{"ready":true,"reasons":\[\]\}$/);
    // With Host and a body, too: POST JSON-RPC in HTTP/1.0.
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
    const rpc = await rawRequest(port, `POST /rpc HTTP/1.0\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    t.regex(rpc, /"result":"0x1bd0"/);
  });

  test(`[${backend}] cache headers: final blocks, transactions and at_height reads are immutable with strong ETags; head answers no-store`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, network: 'testnet' });
    t.teardown(n.stop);
    await waitFor(async () => n.node.ctx.chain.height >= 2, 30_000, 'two blocks');
    const b1 = await httpJson(`${n.url}/chain/blocks/1`);
    t.is(b1.status, 200);
    t.is(b1.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const etag = b1.headers.get('etag');
    t.regex(etag ?? '', /^"[A-Za-z0-9_-]{27}"$/);
    // The same bytes on the alias and by hash (with and without 0x), so the same strong ETag.
    for (const path of ['/blocks/1', `/chain/blocks/${b1.body.hash}`, `/chain/blocks/0x${b1.body.hash.toUpperCase()}`]) {
      const r = await httpJson(`${n.url}${path}`);
      t.is(r.status, 200, path);
      t.is(r.text, b1.text, path);
      t.is(r.headers.get('etag'), etag, path);
    }
    const miss = await httpJson(`${n.url}/chain/blocks/${'ab'.repeat(32)}`);
    t.is(miss.status, 404);
    const cond = await fetch(`${n.url}/chain/blocks/1`, { headers: { 'if-none-match': `"x", ${etag}` } });
    t.is(cond.status, 304);
    t.is(await cond.text(), '');
    t.is(cond.headers.get('etag'), etag);
    t.is(cond.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const other = await fetch(`${n.url}/chain/blocks/1`, { headers: { 'if-none-match': '"nope"' } });
    t.is(other.status, 200);
    await other.arrayBuffer();
    // Head answers: never stored.
    for (const path of [
      '/chain/info',
      '/chain/blocks',
      '/native_status',
      '/accounts/0x0000000000000000000000000000000000000001/balance',
    ]) {
      const r = await httpJson(`${n.url}${path}`);
      t.is(r.status, 200, path);
      t.is(r.headers.get('cache-control'), 'no-store', path);
      t.is(r.headers.get('etag'), null, path);
    }
    // State at a final height: immutable. Above the head: 404, not cached.
    const at = await httpJson(`${n.url}/accounts/0x0000000000000000000000000000000000000001/balance?at_height=1`);
    t.is(at.status, 200);
    t.is(at.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const ahead = await httpJson(`${n.url}/accounts/0x0000000000000000000000000000000000000001/balance?at_height=99999999`);
    t.not(ahead.status, 200);
    t.is(ahead.headers.get('etag'), null);
  });

  test(`[${backend}] cache headers: a confirmed transaction is immutable; the dev chain (history can be rewritten) never is`, async (t) => {
    const dev = await startTestNode({ httpBackend: backend, blockTimeMs: 0 });
    t.teardown(dev.stop);
    const accounts = (
      await httpJson(`${dev.url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'eth_accounts' } })
    ).body.result as string[];
    const send = await httpJson(`${dev.url}/rpc`, {
      method: 'POST',
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_sendTransaction',
        params: [{ from: accounts[0], to: accounts[1], value: '0x1' }],
      },
    });
    t.truthy(send.body.result, send.text);
    const receipt = await waitFor(
      async () =>
        (
          await httpJson(`${dev.url}/rpc`, {
            method: 'POST',
            json: { jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [send.body.result] },
          })
        ).body.result,
      30_000,
      'receipt',
    );
    const block = await httpJson(`${dev.url}/chain/blocks/${Number(receipt.blockNumber)}`);
    t.is(block.status, 200);
    t.is(block.headers.get('cache-control'), 'no-store');
    const txid = (block.body.transactions as { txid: string }[])[0]?.txid;
    t.truthy(txid);
    const tx = await httpJson(`${dev.url}/transactions/${txid}`);
    t.is(tx.status, 200);
    t.is(tx.headers.get('cache-control'), 'no-store');

    // The same answers once the chain is one whose history cannot be rewritten (what `ctx.dev` decides).
    // Automine adds no block meanwhile, so the ETag still names the current bytes: 304.
    const devChain = dev.node.ctx.dev;
    dev.node.ctx.dev = undefined;
    t.teardown(() => {
      dev.node.ctx.dev = devChain;
    });
    const confirmed = await httpJson(`${dev.url}/transactions/${txid}`);
    t.is(confirmed.body.status, 'confirmed');
    t.is(confirmed.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const e = confirmed.headers.get('etag');
    t.truthy(e);
    const again = await fetch(`${dev.url}/transactions/0x${txid}`, { headers: { 'if-none-match': e! } });
    t.is(again.status, 304);
    await again.arrayBuffer();
  });
}

test('config: fleet flags (--ready-max-lag-blocks, --ready-max-age, --drain-secs, --shutdown-grace-secs, --api-keys): defaults, env, bad values', async (t) => {
  const { ConfigError, parseConfig } = await import('../../ts/node/index.js');
  const main = parseConfig(['--network', 'testnet'], {});
  t.is(main.readyMaxLagBlocks, 2);
  t.is(main.readyMaxAgeMs, 10_000, '10 block times of 1 s');
  t.is(main.drainSecs, 5);
  t.is(main.shutdownGraceSecs, 10);
  t.is(main.apiKeysFile, undefined);
  t.is(parseConfig(['--network', 'testnet', '--block-time-ms', '2000'], {}).readyMaxAgeMs, 20_000);
  const dev = parseConfig(['--dev'], {});
  t.is(dev.readyMaxAgeMs, null, 'no age check on the dev chain');
  t.is(dev.drainSecs, 0, 'the dev chain stops at once');
  const set = parseConfig(
    ['--ready-max-lag-blocks', '0', '--ready-max-age', '30s', '--drain-secs', '12', '--api-keys', '/etc/keys.json'],
    { NATIVE_SHUTDOWN_GRACE_SECS: '3' },
  );
  t.like(set, {
    readyMaxLagBlocks: 0,
    readyMaxAgeMs: 30_000,
    drainSecs: 12,
    shutdownGraceSecs: 3,
    apiKeysFile: '/etc/keys.json',
  });
  t.is(parseConfig([], { NATIVE_READY_MAX_AGE: 'off' }).readyMaxAgeMs, null);
  t.is(parseConfig([], { NATIVE_READY_MAX_AGE: '1500ms' }).readyMaxAgeMs, 1500);
  t.throws(() => parseConfig(['--ready-max-age', 'soon'], {}), { instanceOf: ConfigError, message: /--ready-max-age/ });
  t.throws(() => parseConfig(['--drain-secs', '-1'], {}), { instanceOf: ConfigError, message: /--drain-secs/ });
});
