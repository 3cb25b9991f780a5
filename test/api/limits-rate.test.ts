import test from 'ava';
import {
  ClientIpResolver,
  DEFAULT_RATE_LIMIT_GLOBAL,
  DEFAULT_RATE_LIMIT_WINDOW_SECS,
  DEFAULT_RATE_LIMIT_WRITE,
  RateLimiter,
  rateKey,
} from '../../ts/api/limits.js';
import { startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const SPEC_LIMITS = {
  rateLimitGlobal: DEFAULT_RATE_LIMIT_GLOBAL,
  rateLimitWrite: DEFAULT_RATE_LIMIT_WRITE,
  rateLimitWindowSecs: DEFAULT_RATE_LIMIT_WINDOW_SECS,
};

test('spec defaults: 60 per IP per 60 s globally, 10 for writes', (t) => {
  t.is(DEFAULT_RATE_LIMIT_GLOBAL, 60);
  t.is(DEFAULT_RATE_LIMIT_WRITE, 10);
  t.is(DEFAULT_RATE_LIMIT_WINDOW_SECS, 60);
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] global limit: the 61st request within 60 s gets 429 with the spec body`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, ...SPEC_LIMITS });
    t.teardown(n.stop);
    // Every request counts, whatever its route or status.
    for (let i = 0; i < 60; i++) {
      const path = i % 3 === 0 ? '/health' : i % 3 === 1 ? '/nope' : '/chain/blocks/0';
      const r = await fetch(`${n.url}${path}`);
      await r.arrayBuffer();
      t.not(r.status, 429, `request ${i + 1}`);
    }
    const r = await fetch(`${n.url}/health`);
    t.is(r.status, 429);
    t.is(r.headers.get('content-type'), 'application/json');
    t.deepEqual(JSON.parse(await r.text()), { error: 'rate limit exceeded', limit: 60, window_secs: 60 });
    const retry = Number(r.headers.get('retry-after'));
    t.true(retry >= 1 && retry <= 60, `retry-after ${retry}`);
    // Write routes are refused by the global bucket too, reporting that bucket's limit.
    const w = await fetch(`${n.url}/transactions`, { method: 'POST', body: '{}' });
    t.is(w.status, 429);
    t.is(JSON.parse(await w.text()).limit, 60);
  });

  test(`[${backend}] write limit: the 11th write within 60 s gets 429 with limit 10; reads go on`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, ...SPEC_LIMITS });
    t.teardown(n.stop);
    const post = (path: string) => fetch(`${n.url}${path}`, { method: 'POST', body: '{}' });
    for (let i = 0; i < 10; i++) {
      const r = await post(i % 2 ? '/transactions' : '/rpc');
      await r.arrayBuffer();
      t.not(r.status, 429, `write ${i + 1}`);
    }
    const r = await post('/transactions');
    t.is(r.status, 429);
    t.deepEqual(JSON.parse(await r.text()), { error: 'rate limit exceeded', limit: 10, window_secs: 60 });
    t.is((await post('/rpc')).status, 429);
    // 12 requests so far count against the global bucket; reads are still allowed up to 60.
    for (let i = 0; i < 48; i++) {
      const g = await fetch(`${n.url}/health`);
      await g.arrayBuffer();
      t.is(g.status, 200, `read ${i + 1}`);
    }
    const over = await fetch(`${n.url}/health`);
    t.is(over.status, 429);
    t.is(JSON.parse(await over.text()).limit, 60);
  });

  test(`[${backend}] configured limits and window are honoured`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, rateLimitGlobal: 5, rateLimitWrite: 2, rateLimitWindowSecs: 30 });
    t.teardown(n.stop);
    const post = () => fetch(`${n.url}/transactions`, { method: 'POST', body: '{}' });
    t.is((await post()).status, 400);
    t.is((await post()).status, 400);
    const w = await post();
    t.is(w.status, 429);
    t.deepEqual(JSON.parse(await w.text()), { error: 'rate limit exceeded', limit: 2, window_secs: 30 });
    t.true(Number(w.headers.get('retry-after')) <= 30);
    t.is((await fetch(`${n.url}/health`)).status, 200);
    t.is((await fetch(`${n.url}/health`)).status, 200);
    const g = await fetch(`${n.url}/health`);
    t.is(g.status, 429);
    t.deepEqual(JSON.parse(await g.text()), { error: 'rate limit exceeded', limit: 5, window_secs: 30 });
  });

  test(`[${backend}] a client's window ends and its budget comes back`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, rateLimitGlobal: 1, rateLimitWindowSecs: 1 });
    t.teardown(n.stop);
    // A burst of concurrent requests exceeds a budget of 1: they reach the server within one event loop turn or
    // two, so a loaded machine does not spread them over two windows (retried in case one straddles a window).
    const status = async () => {
      const r = await fetch(`${n.url}/health`);
      await r.arrayBuffer();
      return r.status;
    };
    await waitFor(async () => (await Promise.all([status(), status(), status(), status()])).includes(429), 30_000, 'a 429');
    await waitFor(async () => (await status()) === 200, 30_000, 'a new window');
    t.pass();
  });

  test(`[${backend}] 0 means unlimited`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, rateLimitGlobal: 0, rateLimitWrite: 0 });
    t.teardown(n.stop);
    for (let i = 0; i < 80; i++) {
      const r = await fetch(`${n.url}/transactions`, { method: 'POST', body: '{}' });
      await r.arrayBuffer();
      t.is(r.status, 400);
    }
  });

  test(`[${backend}] X-Forwarded-For is ignored without trusted proxies`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, rateLimitGlobal: 3, rateLimitWrite: 0 });
    t.teardown(n.stop);
    const get = (xff: string) => fetch(`${n.url}/health`, { headers: { 'x-forwarded-for': xff } });
    t.is((await get('1.1.1.1')).status, 200);
    t.is((await get('2.2.2.2')).status, 200);
    t.is((await get('3.3.3.3')).status, 200);
    t.is((await get('4.4.4.4')).status, 429, 'every request is 127.0.0.1, whatever the header says');
  });

  test(`[${backend}] X-Forwarded-For names the client behind a trusted proxy (right-most untrusted hop)`, async (t) => {
    const n = await startTestNode({
      httpBackend: backend,
      rateLimitGlobal: 2,
      rateLimitWrite: 0,
      trustedProxies: ['127.0.0.1', '10.0.0.0/8'],
    });
    t.teardown(n.stop);
    const get = (xff?: string) => fetch(`${n.url}/health`, { headers: xff ? { 'x-forwarded-for': xff } : {} });
    t.is((await get('1.1.1.1')).status, 200);
    t.is((await get('1.1.1.1')).status, 200);
    t.is((await get('1.1.1.1')).status, 429);
    // A client cannot escape by prepending addresses: the proxy appends the real one on the right.
    t.is((await get('9.9.9.9, 1.1.1.1')).status, 429);
    // Trusted hops (a second proxy inside 10/8) are skipped from the right.
    t.is((await get('1.1.1.1, 10.1.2.3')).status, 429);
    t.is((await get('2.2.2.2, 10.1.2.3')).status, 200);
    t.is((await get('2.2.2.2')).status, 200);
    t.is((await get('2.2.2.2')).status, 429);
    // Without the header the proxy itself is the client.
    t.is((await get()).status, 200);
    t.is((await get()).status, 200);
    t.is((await get()).status, 429);
  });
}

test('RateLimiter: fixed window per client from its first request, buckets separate, clock injected', (t) => {
  let now = 0;
  const rl = new RateLimiter({ global: 3, write: 1, windowSecs: 60, now: () => now });
  t.is(rl.check('a', true), null);
  t.deepEqual(rl.check('a', true), { bucket: 'write', limit: 1, retryAfterSecs: 60 });
  t.is(rl.check('a', false), null);
  now = 30_000;
  t.deepEqual(rl.check('a', false), { bucket: 'global', limit: 3, retryAfterSecs: 30 });
  t.is(rl.check('b', false), null, 'another client has its own budget');
  now = 60_000;
  t.is(rl.check('a', true), null, 'a new window');
  t.is(rl.check('b', false), null);
  now = 89_999;
  t.is(rl.check('b', false), null);
  t.deepEqual(rl.check('b', false), { bucket: 'global', limit: 3, retryAfterSecs: 1 });
});

test('RateLimiter: memory stays bounded under many client addresses', (t) => {
  let now = 0;
  const rl = new RateLimiter({ global: 5, write: 5, windowSecs: 10, maxTrackedClients: 1000, now: () => now });
  for (let i = 0; i < 50_000; i++) {
    now = i; // 50 s of traffic from 50,000 addresses
    rl.check(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, true);
    const tracked = rl.tracked();
    if (tracked.global > 1000 || tracked.write > 1000) {
      t.fail(`tracked ${JSON.stringify(tracked)} after ${i + 1} clients`);
      return;
    }
  }
  // Expired windows are dropped as time passes, without a timer.
  now = 1_000_000;
  rl.check('1.2.3.4', false);
  t.deepEqual(rl.tracked(), { global: 1, write: 0 });
});

test('rateKey: IPv4 as is, IPv6 by /64', (t) => {
  t.is(rateKey('1.2.3.4'), '1.2.3.4');
  t.is(rateKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.is(rateKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  t.is(rateKey('::1'), '0:0:0:0::/64');
  t.is(rateKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(rateKey('64:ff9b::1.2.3.4'), '64:ff9b:0:0::/64');
});

test('ClientIpResolver: trusted proxies as IPs or CIDR ranges; malformed entries refused', (t) => {
  const none = new ClientIpResolver([]);
  t.is(none.resolve('127.0.0.1', '1.1.1.1'), '127.0.0.1');
  const r = new ClientIpResolver(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
  t.is(r.resolve('127.0.0.1', '1.1.1.1'), '1.1.1.1');
  t.is(r.resolve('8.8.8.8', '1.1.1.1'), '8.8.8.8', 'header from an untrusted peer is ignored');
  t.is(r.resolve('127.0.0.1', ' 5.5.5.5 , 1.1.1.1:4567 '), '1.1.1.1');
  t.is(r.resolve('127.0.0.1', '[2001:db8::7]:443'), '2001:db8::7');
  t.is(r.resolve('fd00::1', '10.0.0.2, 10.9.9.9'), '10.0.0.2', 'all hops trusted: the left-most one');
  t.is(r.resolve('127.0.0.1', 'garbage, 10.0.0.5'), '10.0.0.5', 'stops at a malformed hop');
  t.is(r.resolve('127.0.0.1', '::ffff:1.2.3.4'), '1.2.3.4');
  t.throws(() => new ClientIpResolver(['nope']), { message: /not an IP address/ });
  t.throws(() => new ClientIpResolver(['10.0.0.0/33']), { message: /prefix length/ });
});
