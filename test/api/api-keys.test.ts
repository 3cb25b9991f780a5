/**
 * Issue 26 section 3: per-key quotas from `--api-keys FILE` (the fixed format), on both HTTP backends.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ApiKeyRegistry, ApiKeysFileError, parseApiKeys } from '../../ts/api/api-keys.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-0123456789abcdef';
const ADMIN = 'admin-key-0123456789';

/** The example entry, with a small rate so a test can spend it. */
const fileOf = (extra: object[] = []) =>
  JSON.stringify({
    keys: [
      {
        key: KEY_A,
        label: 'team-a',
        rate: 12,
        window_secs: 60,
        weights: { eth_getLogs: 10, 'debug_trace*': 50, 'GET /chain/blocks/*': 2 },
        allow: ['eth_*', 'net_*', 'GET /chain/*'],
        deny: ['debug_*', 'eth_sign*'],
      },
      { key: KEY_B, label: 'team-b', rate: 1000 },
      ...extra,
    ],
  });

test('keys file: the fixed format parses; bad entries are refused naming the field, never the key', (t) => {
  const [a, b] = parseApiKeys(fileOf());
  t.is(a.label, 'team-a');
  t.is(a.rate, 12);
  t.is(a.windowSecs, 60);
  t.deepEqual(a.allow, ['eth_*', 'net_*', 'GET /chain/*']);
  t.is(b.windowSecs, 60, 'window_secs defaults to 60');
  t.is(b.allow, null, 'no allow: everything allowed');
  const bad = (keys: object[]) => () => parseApiKeys(JSON.stringify({ keys }));
  t.throws(bad([{ key: 'short-secret', label: 'x', rate: 1 }]), {
    instanceOf: ApiKeysFileError,
    message: /keys\[0\]\.key: must be a string of at least 16/,
  });
  const err = t.throws(
    bad([
      { key: KEY_A, label: 'x', rate: 1 },
      { key: KEY_A, label: 'y', rate: 1 },
    ]),
  );
  t.regex(err.message, /keys\[1\]\.key: repeats/);
  t.false(err.message.includes(KEY_A));
  t.throws(bad([{ key: KEY_A, label: 'x', rate: -1 }]), { message: /rate: must be an integer >= 0/ });
  t.throws(bad([{ key: KEY_A, label: 'x', rate: 1, allow: ['eth_*_x*'] }]), { message: /may only end a pattern/ });
  t.throws(bad([{ key: KEY_A, label: '', rate: 1 }]), { message: /label/ });
  t.throws(() => parseApiKeys('{"keys": 3}'), { message: /expected an object/ });
  t.throws(() => parseApiKeys('nope'), { message: /not valid JSON/ });
});

test('grants: deny wins, allow patterns, weights (exact, then longest prefix, else 1), refused charges consume nothing', (t) => {
  let now = 1000;
  const reg = new ApiKeyRegistry(parseApiKeys(fileOf()), { now: () => now });
  t.is(reg.lookup('key-a-0123456789abcdeX'), null);
  t.is(reg.lookup('nope'), null);
  const g = reg.lookup(KEY_A)!;
  t.is(g.label, 'team-a');
  t.true(g.allows('eth_blockNumber'));
  t.false(g.allows('eth_signTransaction'), 'deny wins over allow');
  t.false(g.allows('debug_traceTransaction'));
  t.false(g.allows('web3_clientVersion'), 'not in allow');
  t.true(g.allows('GET /chain/blocks/5'));
  t.false(g.allows('GET /accounts/0x1/balance'));
  t.is(g.weightOf('eth_getLogs'), 10);
  t.is(g.weightOf('debug_traceCall'), 50);
  t.is(g.weightOf('GET /chain/blocks/7'), 2);
  t.is(g.weightOf('eth_chainId'), 1);
  // 12 units per 60 s: 10 + 2 fit, then nothing more; the refused 1 is not charged.
  t.is(g.charge(10), null);
  t.is(g.charge(2), null);
  t.is(g.charge(1), 60);
  now += 30_000;
  t.is(g.charge(1), 30, 'Retry-After counts down; still nothing charged');
  // A reload keeps the window's usage of a key that stays (no fresh budget from a SIGHUP).
  reg.replace(parseApiKeys(fileOf()));
  t.is(reg.lookup(KEY_A)!.charge(1), 30);
  now += 30_000;
  t.is(reg.lookup(KEY_A)!.charge(12), null, 'a new window');
  t.not(reg.lookup(KEY_A)!.charge(13), null, 'heavier than the whole rate: never admitted');
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] keys file at the node: X-API-Key and /rpc/<key>, 403 / -32601 / 429 / 401, per-key metrics, SIGHUP reload`, async (t) => {
    const dir = tempDir();
    t.teardown(dir.cleanup);
    const file = join(dir.dir, 'keys.json');
    writeFileSync(file, fileOf());
    // Per-IP limits of 10 requests per window: the ~25 keyed requests below are not counted against them.
    const n = await startTestNode({
      httpBackend: backend,
      apiKeysFile: file,
      apiKey: ADMIN,
      rateLimitGlobal: 10,
      rateLimitWrite: 10,
    });
    t.teardown(n.stop);
    const rpc = (path: string, body: unknown, key?: string) =>
      httpJson(`${n.url}${path}`, { method: 'POST', json: body, headers: key ? { 'x-api-key': key } : {} });
    const call = (method: string, id = 1, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params });

    // JSON-RPC by header and by path; a batch is judged call by call (a denied call answers -32601).
    const one = await rpc('/rpc', call('eth_chainId'), KEY_A);
    t.is(one.status, 200);
    t.is(one.body.result, '0x1bd0');
    const batch = await rpc(`/rpc/${KEY_A}`, [call('eth_blockNumber', 1), call('web3_clientVersion', 2), call('eth_sign', 3)]);
    t.is(batch.status, 200);
    t.truthy(batch.body[0].result);
    t.deepEqual(batch.body[1].error, { code: -32601, message: 'method not allowed for this key' });
    t.deepEqual(batch.body[2].error, { code: -32601, message: 'method not allowed for this key' });
    // REST: an allowed route weighs 2; a route outside allow is 403 and costs nothing.
    t.is((await httpJson(`${n.url}/chain/blocks/0`, { headers: { 'x-api-key': KEY_A } })).status, 200);
    const forbidden = await httpJson(`${n.url}/accounts/0x${'11'.repeat(20)}/balance`, { headers: { 'x-api-key': KEY_A } });
    t.is(forbidden.status, 403);
    t.deepEqual(forbidden.body, { success: false, error: 'route not allowed for this key' });
    // Spent so far: 1 + 1 + 2 = 4 of 12. eth_getLogs weighs 10: refused whole with the spec's 429.
    const logs = await rpc('/rpc', call('eth_getLogs', 1, [{ fromBlock: '0x0', toBlock: '0x0' }]), KEY_A);
    t.is(logs.status, 429);
    t.deepEqual(logs.body, { error: 'rate limit exceeded', limit: 12, window_secs: 60 });
    const retry = Number(logs.headers.get('retry-after'));
    t.true(retry >= 1 && retry <= 60, `retry-after ${retry}`);
    // The refused request consumed nothing: 8 units are still there.
    for (let i = 0; i < 8; i++) t.is((await rpc('/rpc', call('eth_chainId'), KEY_A)).status, 200, `call ${i + 5}`);
    t.is((await rpc('/rpc', call('eth_chainId'), KEY_A)).status, 429);
    // Another key has its own budget, and no allow list: everything.
    t.is((await httpJson(`${n.url}/accounts/0x${'11'.repeat(20)}/balance`, { headers: { 'x-api-key': KEY_B } })).status, 200);
    t.is((await rpc(`/rpc/${KEY_B}`, call('web3_clientVersion'))).status, 200);
    // Unknown keys: 401 with the spec's empty body, by header and by path.
    const unknown = await httpJson(`${n.url}/chain/blocks/0`, { headers: { 'x-api-key': 'not-a-key-0123456789' } });
    t.is(unknown.status, 401);
    t.is(unknown.text, '');
    t.is((await rpc('/rpc/not-a-key-0123456789', call('eth_chainId'))).status, 401);
    // /health, /ready and /metrics need no key (an unknown one is ignored there).
    for (const path of ['/health', '/ready', '/metrics']) {
      t.is((await fetch(`${n.url}${path}`, { headers: { 'x-api-key': 'not-a-key-0123456789' } })).status, 200, path);
    }
    // The node's own --api-key keeps its spec meaning: admin routes need it; a keys-file key is not enough.
    t.is((await httpJson(`${n.url}/admin/log`, { headers: { 'x-api-key': KEY_B } })).status, 401);
    const admin = await httpJson(`${n.url}/admin/log?limit=100`, { headers: { 'x-api-key': ADMIN } });
    t.is(admin.status, 200);
    t.false(admin.text.includes(KEY_A) || admin.text.includes('not-a-key'), 'no key in the audit log');

    // Metrics by label, never by key.
    const metrics = await (await fetch(`${n.url}/metrics`)).text();
    t.regex(metrics, /native_api_key_requests_total\{key="team-a"\} 11/);
    t.regex(metrics, /native_api_key_weight_total\{key="team-a"\} 12/);
    t.regex(metrics, /native_api_key_refused_total\{key="team-a",reason="denied"\} 3/);
    t.regex(metrics, /native_api_key_refused_total\{key="team-a",reason="rate"\} 2/);
    t.regex(metrics, /native_api_key_refused_total\{key="unknown",reason="unknown_key"\} 2/);
    t.false(metrics.includes(KEY_A));

    // SIGHUP re-reads the file: a new key works, a removed one is unknown; a broken file keeps the keys.
    const KEY_C = 'key-c-0123456789abcdef';
    writeFileSync(file, JSON.stringify({ keys: [{ key: KEY_C, label: 'team-c', rate: 5 }] }));
    n.node.reloadApiKeys();
    t.is((await rpc('/rpc', call('eth_chainId'), KEY_C)).status, 200);
    t.is((await rpc('/rpc', call('eth_chainId'), KEY_A)).status, 401);
    writeFileSync(file, '{"keys": [');
    n.node.reloadApiKeys();
    t.is((await rpc('/rpc', call('eth_chainId'), KEY_C)).status, 200);
  });

  test(`[${backend}] without a key the per-IP rules apply as before; /rpc/<key> is 404 without a keys file`, async (t) => {
    const dir = tempDir();
    t.teardown(dir.cleanup);
    const file = join(dir.dir, 'keys.json');
    writeFileSync(file, fileOf());
    const n = await startTestNode({ httpBackend: backend, apiKeysFile: file, rateLimitGlobal: 2 });
    t.teardown(n.stop);
    t.is((await fetch(`${n.url}/chain/blocks/0`)).status, 200);
    t.is((await fetch(`${n.url}/chain/blocks/0`)).status, 200);
    const limited = await httpJson(`${n.url}/chain/blocks/0`);
    t.is(limited.status, 429);
    t.deepEqual(limited.body, { error: 'rate limit exceeded', limit: 2, window_secs: 60 });
    // The same client with a key is counted per key.
    t.is((await fetch(`${n.url}/chain/blocks/0`, { headers: { 'x-api-key': KEY_B } })).status, 200);

    const plain = await startTestNode({ httpBackend: backend });
    t.teardown(plain.stop);
    const r = await fetch(`${plain.url}/rpc/${KEY_A}`, {
      method: 'POST',
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
    });
    t.is(r.status, 404);
  });
}

test('the node refuses to start with a bad keys file (exit 1, one line naming the field)', async (t) => {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const dir = tempDir();
  t.teardown(dir.cleanup);
  const file = join(dir.dir, 'keys.json');
  writeFileSync(file, JSON.stringify({ keys: [{ key: 'short', label: 'x', rate: 1 }] }));
  const main = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));
  const p = spawn(process.execPath, [
    main,
    '--dev',
    '--port',
    '0',
    '--data-dir',
    dir.dir,
    '--api-keys',
    file,
    '--grpc-port',
    'off',
  ]);
  let err = '';
  p.stderr.on('data', (d) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve) => p.on('exit', resolve));
  t.is(code, 1);
  t.regex(err, /^error: .*keys\.json: keys\[0\]\.key: must be a string of at least 16 characters\n$/);
});
