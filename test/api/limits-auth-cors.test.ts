import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { restRoutes } from '../../ts/api/index.js';
import { ConfigError, parseConfig } from '../../ts/node/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const KEY = 'test-api-key-0123456789';

/** The spec's Auth endpoints ("Authentication"); the ones that also count as writes ("Limits"). */
const SPEC_AUTH = [
  'GET /admin/log',
  'POST /transactions',
  'POST /tokens/deploy',
  'POST /tokens/:contract/transfer',
  'POST /tokens/:contract/burn',
  'POST /rpc',
  'POST /', // JSON-RPC at the root, the same endpoint as POST /rpc
  'POST /validators',
  // Not in the spec: the NFT submission route (docs/nft.md) is guarded as POST /transactions is, or it would bypass its key.
  'POST /nft/submit',
  // Not in the spec: JSON-RPC with a keys-file key as the last path segment (issue 26), the same endpoint as POST /rpc.
  'POST /rpc/:key',
];
const SPEC_WRITE = [
  'POST /transactions',
  'POST /tokens/deploy',
  'POST /tokens/:contract/transfer',
  'POST /tokens/:contract/burn',
  'POST /rpc',
  'POST /',
  'POST /nft/submit',
  'POST /rpc/:key',
];

/** A concrete path for a route pattern. */
function concrete(path: string): string {
  return path.replace(/:(\w+)/g, (_m, name: string) => {
    if (name === 'contract') return `SRC20_${'ab'.repeat(20)}`;
    if (/address|addr/.test(name)) return `0x${'cd'.repeat(20)}`;
    return '1';
  });
}

test('route table: every spec Auth endpoint present is key-checked, every spec write endpoint write-limited', (t) => {
  const present = new Map(restRoutes.map((r) => [`${r.method} ${r.path}`, r]));
  for (const id of SPEC_AUTH) {
    const r = present.get(id);
    if (r) t.true(r.auth === true, `${id} must have auth: true`);
  }
  for (const id of SPEC_WRITE) {
    const r = present.get(id);
    if (r) t.true(r.write === true, `${id} must have write: true`);
  }
  for (const r of restRoutes) {
    if (r.auth)
      t.true(SPEC_AUTH.includes(`${r.method} ${r.path}`), `${r.method} ${r.path} is key-checked but not in the spec list`);
  }
  t.true(present.has('GET /admin/log') && present.has('POST /transactions') && present.has('GET /metrics'));
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] API key: missing and wrong keys get 401 with an empty body on every Auth route; audited`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, apiKey: KEY, blockTimeMs: 60_000 });
    t.teardown(n.stop);
    const authRoutes = restRoutes.filter((r) => r.auth);
    t.true(authRoutes.length >= 3);
    for (const r of authRoutes) {
      const url = `${n.url}${concrete(r.path)}`;
      const body = r.method === 'POST' ? '{}' : undefined;
      const missing = await fetch(url, { method: r.method, body });
      t.is(missing.status, 401, `${r.method} ${r.path} without key`);
      t.is(await missing.text(), '');
      const wrong = await fetch(url, { method: r.method, body, headers: { 'x-api-key': `${KEY.slice(0, -1)}x` } });
      t.is(wrong.status, 401, `${r.method} ${r.path} wrong key`);
      t.is(await wrong.text(), '');
      const short = await fetch(url, { method: r.method, body, headers: { 'x-api-key': 'k' } });
      t.is(short.status, 401, `${r.method} ${r.path} key of another length`);
      await short.arrayBuffer();
      const right = await fetch(url, { method: r.method, body, headers: { 'x-api-key': KEY } });
      t.not(right.status, 401, `${r.method} ${r.path} right key`);
      await right.arrayBuffer();
    }
    // Public routes stay public.
    t.is((await fetch(`${n.url}/health`)).status, 200);
    t.is((await fetch(`${n.url}/metrics`)).status, 200);
    const log = await httpJson(`${n.url}/admin/log?limit=10000`, { headers: { 'x-api-key': KEY } });
    t.is(log.status, 200);
    const failures = log.body.entries.filter((e: any) => e.kind === 'auth_failure');
    t.is(failures.length, authRoutes.length * 3);
    const paths = new Set(failures.map((e: any) => e.detail.path));
    // A key in the path (POST /rpc/<key>) is never written to the log.
    for (const r of authRoutes) t.true(paths.has(r.keyInPath ? '/rpc/<key>' : concrete(r.path)), r.path);
    t.true(failures.every((e: any) => e.detail.ip === '127.0.0.1'));
    t.deepEqual([...new Set(failures.map((e: any) => e.detail.reason))].sort(), ['missing', 'wrong']);
    t.false(log.text.includes(KEY), 'the key never appears in the audit log');
  });

  test(`[${backend}] without NATIVE_API_KEY the check is skipped`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 60_000 });
    t.teardown(n.stop);
    for (const r of restRoutes.filter((x) => x.auth)) {
      const res = await fetch(`${n.url}${concrete(r.path)}`, { method: r.method, body: r.method === 'POST' ? '{}' : undefined });
      t.not(res.status, 401, `${r.method} ${r.path}`);
      await res.arrayBuffer();
    }
  });

  test(`[${backend}] CORS: none by default (mainnet, testnet); preflight answered without CORS headers`, async (t) => {
    // Test nodes run the dev chain, whose default is CORS '*'; the other networks' default is none.
    const n = await startTestNode({ httpBackend: backend, corsOrigin: undefined });
    t.teardown(n.stop);
    const r = await fetch(`${n.url}/health`, { headers: { origin: 'https://evil.example' } });
    t.is(r.status, 200);
    t.is(r.headers.get('access-control-allow-origin'), null);
    const pre = await fetch(`${n.url}/transactions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    t.is(pre.status, 204);
    t.is(pre.headers.get('access-control-allow-origin'), null);
    t.is(pre.headers.get('access-control-allow-methods'), null);
  });

  test(`[${backend}] CORS '*': any origin, also on 401 and 429; preflight lists X-API-Key`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, corsOrigin: '*', apiKey: KEY, rateLimitGlobal: 4 });
    t.teardown(n.stop);
    const r = await fetch(`${n.url}/health`, { headers: { origin: 'https://a.example' } });
    t.is(r.headers.get('access-control-allow-origin'), '*');
    const pre = await fetch(`${n.url}/transactions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://a.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key',
      },
    });
    t.is(pre.status, 204);
    t.is(pre.headers.get('access-control-allow-origin'), '*');
    t.regex(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    t.regex(pre.headers.get('access-control-allow-headers') ?? '', /X-API-Key/i);
    const denied = await fetch(`${n.url}/transactions`, { method: 'POST', body: '{}', headers: { origin: 'https://a.example' } });
    t.is(denied.status, 401);
    t.is(denied.headers.get('access-control-allow-origin'), '*');
    await fetch(`${n.url}/health`);
    await fetch(`${n.url}/health`);
    const limited = await fetch(`${n.url}/health`, { headers: { origin: 'https://a.example' } });
    t.is(limited.status, 429);
    t.is(limited.headers.get('access-control-allow-origin'), '*');
    t.is(limited.headers.get('access-control-expose-headers'), 'Retry-After');
  });

  test(`[${backend}] CORS single origin: echoed for that origin only; preflight`, async (t) => {
    const origin = 'https://wallet.example';
    const n = await startTestNode({ httpBackend: backend, corsOrigin: origin });
    t.teardown(n.stop);
    const ok = await fetch(`${n.url}/health`, { headers: { origin } });
    t.is(ok.headers.get('access-control-allow-origin'), origin);
    t.regex(ok.headers.get('vary') ?? '', /Origin/);
    const other = await fetch(`${n.url}/health`, { headers: { origin: 'https://evil.example' } });
    t.is(other.status, 200);
    t.is(other.headers.get('access-control-allow-origin'), null);
    t.regex(other.headers.get('vary') ?? '', /Origin/);
    const pre = await fetch(`${n.url}/rpc`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    t.is(pre.status, 204);
    t.is(pre.headers.get('access-control-allow-origin'), origin);
    t.regex(pre.headers.get('access-control-allow-headers') ?? '', /Content-Type/i);
    const preOther = await fetch(`${n.url}/rpc`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    t.is(preOther.headers.get('access-control-allow-origin'), null);
  });

  test(`[${backend}] body limit at the node: configured maxBodyBytes -> 413 before any handler work`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, maxBodyBytes: 1000, apiKey: KEY });
    t.teardown(n.stop);
    const post = (size: number) =>
      fetch(`${n.url}/transactions`, { method: 'POST', body: Buffer.alloc(size, 0x20), headers: { 'x-api-key': KEY } });
    const big = await post(1001);
    t.is(big.status, 413);
    t.deepEqual(JSON.parse(await big.text()), { error: 'request body too large', limit: 1000 });
    const fits = await post(1000);
    t.is(fits.status, 400, 'exactly the limit reaches the handler (and is refused there as not JSON)');
    await fits.arrayBuffer();
  });

  test(`[${backend}] concurrency cap at the node: maxConcurrent applies (503 while a request is held)`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, maxConcurrent: 1 });
    t.teardown(n.stop);
    const port = Number(new URL(n.url).port);
    // A POST whose body never completes holds the only slot.
    const sock: Socket = connect(port, '127.0.0.1');
    t.teardown(() => sock.destroy());
    sock.on('error', () => undefined);
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    sock.write('POST /transactions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    const busy = await waitFor(
      async () => {
        const r = await fetch(`${n.url}/health`);
        const text = await r.text();
        return r.status === 503 ? text : null;
      },
      10_000,
      '503 while the slot is held',
    );
    t.deepEqual(JSON.parse(busy), { error: 'server busy' });
    sock.destroy();
    await waitFor(async () => (await fetch(`${n.url}/health`)).status === 200, 10_000, 'the slot to be released');
    t.pass();
  });
}

test('config: spec defaults; env and flags (flags win); 0 = unlimited; bad values refused', (t) => {
  // The dev chain runs open, like anvil and Hardhat: no rate limits, CORS '*' (each still settable).
  const dev = parseConfig(['--dev'], {});
  t.deepEqual([dev.rateLimitGlobal, dev.rateLimitWrite, dev.corsOrigin], [0, 0, '*']);
  for (const net of ['mainnet', 'testnet']) {
    const c = parseConfig(['--network', net], {});
    t.deepEqual([c.rateLimitGlobal, c.rateLimitWrite, c.corsOrigin], [60, 10, undefined], net);
  }
  const d = parseConfig([], {});
  t.is(d.rateLimitGlobal, 60);
  t.is(d.rateLimitWrite, 10);
  t.is(d.rateLimitWindowSecs, 60);
  t.is(d.maxBodyBytes, 1_048_576);
  t.is(d.maxConcurrent, 500);
  t.deepEqual(d.trustedProxies, []);
  t.is(d.corsOrigin, undefined);
  t.is(d.apiKey, undefined);
  const env = {
    NATIVE_RATE_LIMIT_GLOBAL: '7',
    NATIVE_RATE_LIMIT_WRITE: '3',
    NATIVE_RATE_LIMIT_WINDOW_SECS: '30',
    NATIVE_MAX_BODY_BYTES: '2048',
    NATIVE_MAX_CONCURRENT: '8',
    NATIVE_TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16,::1',
    NATIVE_CORS_ORIGIN: 'https://x.example',
  };
  const e = parseConfig(['--dev'], env);
  t.deepEqual([e.rateLimitGlobal, e.rateLimitWrite, e.rateLimitWindowSecs, e.maxBodyBytes, e.maxConcurrent], [7, 3, 30, 2048, 8]);
  t.deepEqual(e.trustedProxies, ['10.0.0.1', '192.168.0.0/16', '::1']);
  t.is(e.corsOrigin, 'https://x.example');
  const f = parseConfig(
    [
      '--dev',
      '--rate-limit-global',
      '0',
      '--rate-limit-write',
      '0',
      '--rate-limit-window-secs',
      '5',
      '--max-body-bytes',
      '4096',
      '--max-concurrent',
      '2',
      '--trusted-proxies',
      '127.0.0.1',
    ],
    env,
  );
  t.deepEqual(
    [f.rateLimitGlobal, f.rateLimitWrite, f.rateLimitWindowSecs, f.maxBodyBytes, f.maxConcurrent, f.trustedProxies],
    [0, 0, 5, 4096, 2, ['127.0.0.1']],
  );
  for (const bad of [
    { NATIVE_RATE_LIMIT_GLOBAL: '-1' },
    { NATIVE_RATE_LIMIT_WRITE: 'ten' },
    { NATIVE_RATE_LIMIT_WINDOW_SECS: '0' },
    { NATIVE_MAX_BODY_BYTES: '0' },
    { NATIVE_MAX_CONCURRENT: '0' },
    { NATIVE_TRUSTED_PROXIES: 'proxy.local' },
    { NATIVE_TRUSTED_PROXIES: '10.0.0.0/40' },
  ]) {
    t.throws(() => parseConfig(['--dev'], bad), { instanceOf: ConfigError }, JSON.stringify(bad));
  }
});

test('NATIVE_API_KEY: shorter than 16 characters is refused; 16 is accepted', (t) => {
  t.throws(() => parseConfig(['--dev'], { NATIVE_API_KEY: 'k'.repeat(15) }), {
    instanceOf: ConfigError,
    message: /at least 16 characters/,
  });
  t.throws(() => parseConfig(['--dev', '--api-key', 'short'], {}), { instanceOf: ConfigError });
  t.is(parseConfig(['--dev'], { NATIVE_API_KEY: 'k'.repeat(16) }).apiKey, 'k'.repeat(16));
});

test('the node binary refuses to start with a short NATIVE_API_KEY (exit 2, key not echoed)', async (t) => {
  const main = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));
  const proc = spawn(process.execPath, [main, '--dev', '--port', '0', '--data-dir', '/nonexistent-never-created'], {
    env: { ...process.env, NATIVE_API_KEY: 'tooshort-key' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  // 'close' comes after the output streams ended
  const code = await new Promise<number | null>((resolve) => proc.on('close', (c) => resolve(c)));
  t.is(code, 2);
  t.regex(out, /config error: NATIVE_API_KEY must be at least 16 characters/);
  t.false(out.includes('tooshort-key'));
});
