import { randomBytes } from 'node:crypto';
import { connect, createServer as createNetServer } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import {
  type HttpHandler,
  type HttpLogger,
  type HttpServer,
  type HttpServerOptions,
  startHttpServer,
} from '../../ts/http/index.js';
import { formatIp, normalizeIp } from '../../ts/http/common.js';

const BACKENDS = ['uws', 'node'] as const;
type Backend = (typeof BACKENDS)[number];
const MiB = 1_048_576;
const HOST = '127.0.0.1';

interface LogEntry {
  level: string;
  o: object;
  msg?: string;
}

function captureLogger(): HttpLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: string) =>
    (o: object, msg?: string): void => {
      entries.push({ level, o, msg });
    };
  return { entries, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/** Polls until `cond` holds; fails after the deadline (generous: the CI box is a noisy 2-core machine). */
async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A promise to park handlers on, released by the test. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

async function start(
  t: ExecutionContext,
  backend: Backend,
  handler: HttpHandler,
  extra: Partial<HttpServerOptions> = {},
): Promise<{ server: HttpServer; url: string; log: ReturnType<typeof captureLogger> }> {
  const log = captureLogger();
  const server = await startHttpServer({ host: HOST, port: 0, backend, logger: log, ...extra }, handler);
  t.teardown(() => server.close());
  t.is(server.backend, backend);
  t.true(server.port > 0);
  return { server, url: `http://${HOST}:${server.port}`, log };
}

const echo: HttpHandler = (req) => ({
  status: 200,
  body: JSON.stringify({
    method: req.method,
    path: req.path,
    query: [...req.query.entries()],
    headers: req.headers,
    ip: req.ip,
    bodyLength: req.body.length,
  }),
});

const echoBody: HttpHandler = (req) => ({
  status: 200,
  headers: { 'content-type': 'application/octet-stream' },
  body: req.body,
});

/** A chunked (no Content-Length) request body of `total` bytes in 64 KiB pieces. */
function streamOf(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) {
        controller.close();
        return;
      }
      const n = Math.min(65_536, total - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(7));
    },
  });
}

for (const backend of BACKENDS) {
  test(`${backend}: GET echoes method, path, query, headers and ip`, async (t) => {
    const { url } = await start(t, backend, echo);
    const res = await fetch(`${url}/echo/a%20b?x=1&y=two%20words&x=3`, { headers: { 'X-Custom-Header': 'Value 1' } });
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), 'application/json');
    const text = await res.text();
    t.is(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    const got = JSON.parse(text);
    t.is(got.method, 'GET');
    t.is(got.path, '/echo/a%20b');
    t.deepEqual(got.query, [
      ['x', '1'],
      ['y', 'two words'],
      ['x', '3'],
    ]);
    t.is(got.headers['x-custom-header'], 'Value 1');
    t.is(got.headers.host, `${HOST}:${new URL(url).port}`);
    t.is(got.ip, '127.0.0.1');
    t.is(got.bodyLength, 0);
    for (const name of Object.keys(got.headers)) t.is(name, name.toLowerCase());
  });

  test(`${backend}: requestHeaders: the handler sees the named headers (uWS: only those); limits still apply`, async (t) => {
    const { url } = await start(t, backend, echo, { requestHeaders: ['X-Wanted'], maxBodyBytes: 10 });
    const res = await fetch(`${url}/e?q=1`, { headers: { 'X-Wanted': 'yes', 'X-Other': 'no' } });
    const got = JSON.parse(await res.text());
    t.is(got.headers['x-wanted'], 'yes');
    t.is(got.headers['x-other'], backend === 'uws' ? undefined : 'no');
    t.deepEqual(got.query, [['q', '1']]);
    t.is(got.ip, '127.0.0.1');
    // The framing headers are read whatever the list: an announced oversized body is refused.
    t.is((await fetch(`${url}/p`, { method: 'POST', body: 'x'.repeat(11) })).status, 413);
  });

  test(`${backend}: prefixHeaders: paths under the prefix also see its headers (uWS: no other path copies them)`, async (t) => {
    const { url } = await start(t, backend, echo, {
      requestHeaders: ['x-wanted'],
      prefixHeaders: [{ prefix: '/grpc.Service/', names: ['X-Scoped'] }],
    });
    const headers = { 'X-Wanted': 'yes', 'X-Scoped': 'scoped' };
    const under = JSON.parse(await (await fetch(`${url}/grpc.Service/Method`, { headers })).text());
    t.is(under.headers['x-wanted'], 'yes');
    t.is(under.headers['x-scoped'], 'scoped');
    const other = JSON.parse(await (await fetch(`${url}/rpc`, { headers })).text());
    t.is(other.headers['x-wanted'], 'yes');
    t.is(other.headers['x-scoped'], backend === 'uws' ? undefined : 'scoped');
  });

  test(`${backend}: POST small body is echoed`, async (t) => {
    const { url } = await start(t, backend, echoBody);
    const res = await fetch(`${url}/p`, { method: 'POST', body: 'hello world' });
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), 'application/octet-stream');
    t.is(await res.text(), 'hello world');
  });

  test(`${backend}: body of exactly maxBodyBytes (1 MiB) is accepted`, async (t) => {
    const { url } = await start(t, backend, echoBody);
    const body = randomBytes(MiB);
    const res = await fetch(`${url}/p`, { method: 'POST', body });
    t.is(res.status, 200);
    t.true(Buffer.from(await res.arrayBuffer()).equals(body));
  });

  test(`${backend}: Content-Length over the limit -> 413`, async (t) => {
    let calls = 0;
    const { url } = await start(t, backend, (req) => {
      calls++;
      return echoBody(req);
    });
    const res = await fetch(`${url}/p`, { method: 'POST', body: Buffer.alloc(MiB + 1) });
    t.is(res.status, 413);
    t.is(res.headers.get('content-type'), 'application/json');
    t.deepEqual(await res.json(), { error: 'request body too large', limit: MiB });
    t.is(calls, 0);
    const ok = await fetch(`${url}/after`, { method: 'POST', body: 'x' });
    t.is(ok.status, 200);
    t.is(await ok.text(), 'x');
  });

  test(`${backend}: maxBodyBytes option is honoured`, async (t) => {
    const { url } = await start(t, backend, echoBody, { maxBodyBytes: 10 });
    t.is((await fetch(`${url}/p`, { method: 'POST', body: '0123456789' })).status, 200);
    const res = await fetch(`${url}/p`, { method: 'POST', body: '0123456789a' });
    t.is(res.status, 413);
    t.deepEqual(await res.json(), { error: 'request body too large', limit: 10 });
  });

  test(`${backend}: chunked body without Content-Length is echoed`, async (t) => {
    const { url } = await start(t, backend, (req) => ({
      status: 200,
      body: JSON.stringify({ length: req.body.length, te: req.headers['transfer-encoding'] ?? null }),
    }));
    const res = await fetch(`${url}/p`, { method: 'POST', body: streamOf(300_000), duplex: 'half' } as RequestInit);
    t.is(res.status, 200);
    t.deepEqual(await res.json(), { length: 300_000, te: 'chunked' });
  });

  test(`${backend}: a small chunked body (one piece) at the limit is read whole; one byte over -> 413`, async (t) => {
    const { url } = await start(t, backend, (req) => ({ status: 200, body: JSON.stringify({ length: req.body.length }) }), {
      maxBodyBytes: 10,
    });
    const at = await fetch(`${url}/p`, { method: 'POST', body: streamOf(10), duplex: 'half' } as RequestInit);
    t.deepEqual(await at.json(), { length: 10 });
    const over = await fetch(`${url}/p`, { method: 'POST', body: streamOf(11), duplex: 'half' } as RequestInit);
    t.is(over.status, 413);
    t.deepEqual(await over.json(), { error: 'request body too large', limit: 10 });
  });

  test(`${backend}: streamed body over the limit -> 413`, async (t) => {
    let calls = 0;
    const { url } = await start(t, backend, (req) => {
      calls++;
      return echoBody(req);
    });
    const res = await fetch(`${url}/p`, { method: 'POST', body: streamOf(MiB + 1), duplex: 'half' } as RequestInit);
    t.is(res.status, 413);
    t.deepEqual(await res.json(), { error: 'request body too large', limit: MiB });
    t.is(calls, 0);
    t.is((await fetch(`${url}/after`)).status, 200);
  });

  test(`${backend}: concurrency cap answers 503 beyond maxConcurrent`, async (t) => {
    const g = gate();
    let entered = 0;
    const { url } = await start(
      t,
      backend,
      async (req) => {
        if (req.path === '/slow') {
          entered++;
          await g.wait;
        }
        return { status: 200, body: JSON.stringify({ path: req.path }) };
      },
      { maxConcurrent: 2 },
    );
    const slow = [fetch(`${url}/slow`), fetch(`${url}/slow`)];
    await waitFor(() => entered === 2, 'two requests in the handler');
    const busy = await fetch(`${url}/third`, { method: 'POST', body: 'ignored body' });
    t.is(busy.status, 503);
    t.deepEqual(await busy.json(), { error: 'server busy' });
    g.open();
    for (const res of await Promise.all(slow)) {
      t.is(res.status, 200);
      t.deepEqual(await res.json(), { path: '/slow' });
    }
    const after = await Promise.all([fetch(`${url}/a`), fetch(`${url}/b`)]);
    t.deepEqual(
      after.map((r) => r.status),
      [200, 200],
    );
  });

  test(`${backend}: handler errors -> 500, logged, server keeps going`, async (t) => {
    const { url, log } = await start(t, backend, async (req) => {
      if (req.path === '/throw') throw new Error('boom sync');
      if (req.path === '/reject') return Promise.reject(new Error('boom async'));
      if (req.path === '/bad-status') return { status: 42 };
      if (req.path === '/bad-header') return { status: 200, headers: { 'x-bad': 'a\r\nb' }, body: '1' };
      return { status: 200, body: '{"ok":true}' };
    });
    for (const path of ['/throw', '/reject', '/bad-status', '/bad-header']) {
      const res = await fetch(url + path);
      t.is(res.status, 500, path);
      t.deepEqual(await res.json(), { error: 'internal error' });
      const ok = await fetch(`${url}/ok`);
      t.is(ok.status, 200);
      t.deepEqual(await ok.json(), { ok: true });
    }
    t.is(log.entries.filter((e) => e.level === 'error').length, 4);
  });

  test(`${backend}: synchronous handler errors -> 500`, async (t) => {
    const { url, log } = await start(t, backend, () => {
      throw new Error('sync boom');
    });
    const res = await fetch(`${url}/x`);
    t.is(res.status, 500);
    t.deepEqual(await res.json(), { error: 'internal error' });
    t.true(log.entries.some((e) => e.level === 'error'));
  });

  test(`${backend}: client abort while the handler runs does not crash`, async (t) => {
    const g = gate();
    let entered = 0;
    const { url, log } = await start(
      t,
      backend,
      async (req) => {
        if (req.path === '/slow') {
          entered++;
          await g.wait;
        }
        return { status: 200, body: '{"ok":true}' };
      },
      { maxConcurrent: 1 },
    );
    const ac = new AbortController();
    const pending = fetch(`${url}/slow`, { signal: ac.signal }).catch((err: Error) => err);
    await waitFor(() => entered === 1, 'handler entered');
    ac.abort();
    t.true((await pending) instanceof Error);
    await waitFor(() => log.entries.some((e) => e.level === 'debug'), 'server noticed the abort');
    g.open(); // the handler now finishes for a response that is gone
    await waitFor(async () => (await fetch(`${url}/ok`)).status === 200, 'server answering again');
    t.is(log.entries.filter((e) => e.level === 'error').length, 0);
  });

  test(`${backend}: client abort during the body upload does not crash`, async (t) => {
    let uploads = 0;
    const { url, log } = await start(
      t,
      backend,
      (req) => {
        if (req.path === '/upload') uploads++;
        return echoBody(req);
      },
      { maxConcurrent: 1 },
    );
    const ac = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(1000).fill(1));
      },
      pull() {
        return new Promise(() => {}); // never sends the rest
      },
    });
    const pending = fetch(`${url}/upload`, {
      method: 'POST',
      body,
      duplex: 'half',
      signal: ac.signal,
    } as RequestInit).catch((err: Error) => err);
    // the upload holds the only slot once the server has seen it
    await waitFor(async () => (await fetch(`${url}/probe`)).status === 503, 'upload in flight');
    ac.abort();
    t.true((await pending) instanceof Error);
    await waitFor(() => log.entries.some((e) => e.level === 'debug'), 'server noticed the abort');
    await waitFor(async () => (await fetch(`${url}/ok`, { method: 'POST', body: 'z' })).status === 200, 'slot freed');
    t.is(uploads, 0);
    t.is(log.entries.filter((e) => e.level === 'error').length, 0);
  });

  test(`${backend}: response rules (default type, 204, HEAD, Content-Length)`, async (t) => {
    const { url } = await start(t, backend, (req) => {
      if (req.path === '/204') return { status: 204, body: 'dropped' };
      if (req.path === '/empty') return { status: 200 };
      if (req.path === '/text') return { status: 201, headers: { 'Content-Type': 'text/plain', 'X-A': 'b' }, body: 'hi' };
      return { status: 200, body: Buffer.from('{"a":1}') };
    });
    const r204 = await fetch(`${url}/204`);
    t.is(r204.status, 204);
    t.is(r204.headers.get('content-length'), null);
    t.is(await r204.text(), '');
    const empty = await fetch(`${url}/empty`);
    t.is(empty.status, 200);
    t.is(empty.headers.get('content-length'), '0');
    t.is(empty.headers.get('content-type'), null);
    t.is(await empty.text(), '');
    const text = await fetch(`${url}/text`);
    t.is(text.status, 201);
    t.is(text.headers.get('content-type'), 'text/plain');
    t.is(text.headers.get('x-a'), 'b');
    t.is(await text.text(), 'hi');
    const head = await fetch(`${url}/json`, { method: 'HEAD' });
    t.is(head.status, 200);
    t.is(head.headers.get('content-length'), '7');
    t.is(await head.text(), '');
    const json = await fetch(`${url}/json`);
    t.is(json.headers.get('content-type'), 'application/json');
    t.deepEqual(await json.json(), { a: 1 });
  });

  test(`${backend}: pipelined keep-alive requests on one connection`, async (t) => {
    const { server } = await start(t, backend, async (req) => ({ status: 200, body: JSON.stringify({ p: req.path }) }));
    const socket = connect(server.port, HOST);
    t.teardown(() => socket.destroy());
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      data += d;
    });
    socket.write(
      `GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /c HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    await waitFor(() => data.includes('{"p":"/c"}'), 'three responses');
    const order = ['{"p":"/a"}', '{"p":"/b"}', '{"p":"/c"}'].map((b) => data.indexOf(b));
    t.true(order[0] >= 0 && order[0] < order[1] && order[1] < order[2]);
    t.is(data.match(/HTTP\/1\.1 200 OK/g)?.length, 3);
    t.false(socket.destroyed);
  });

  test(`${backend}: announced body far over the limit -> 413 and the connection is closed`, async (t) => {
    const { server } = await start(t, backend, echoBody);
    const socket = connect(server.port, HOST);
    t.teardown(() => socket.destroy());
    let data = '';
    let ended = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      data += d;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      ended = true;
    });
    socket.write(`POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: ${64 * MiB}\r\n\r\n0123456789`);
    await waitFor(() => ended, 'server closing the connection');
    t.regex(data, /^HTTP\/1\.1 413 /);
    t.true(data.endsWith(JSON.stringify({ error: 'request body too large', limit: MiB })));
  });

  test(`${backend}: IPv6 loopback client address`, async (t) => {
    const v6 = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen(0, '::1', () => probe.close(() => resolve(true)));
    });
    if (!v6) {
      t.log('no IPv6 loopback here; skipped');
      t.pass();
      return;
    }
    const server = await startHttpServer({ host: '::1', port: 0, backend, logger: captureLogger() }, echo);
    t.teardown(() => server.close());
    const res = await fetch(`http://[::1]:${server.port}/v6`);
    t.is(((await res.json()) as { ip: string }).ip, '::1');
  });

  test(`${backend}: close() frees the port`, async (t) => {
    const log = captureLogger();
    const first = await startHttpServer({ host: HOST, port: 0, backend, logger: log }, echo);
    const port = first.port;
    await first.close();
    await first.close(); // idempotent
    // nothing listens any more
    const refused = await new Promise<string>((resolve) => {
      const s = connect(port, HOST);
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    t.is(refused, 'ECONNREFUSED');
    // a plain (non-reuseport) listener can bind it ...
    await new Promise<void>((resolve, reject) => {
      const probe = createNetServer();
      probe.once('error', reject);
      probe.listen(port, HOST, () => probe.close(() => resolve()));
    });
    // ... and so can the same backend again
    const second = await startHttpServer({ host: HOST, port, backend, logger: log }, echo);
    t.teardown(() => second.close());
    t.is(second.port, port);
    const res = await fetch(`http://${HOST}:${port}/again`);
    t.is(res.status, 200);
    t.is(((await res.json()) as { path: string }).path, '/again');
  });

  test(`${backend}: listening on a taken port fails cleanly`, async (t) => {
    const { server } = await start(t, backend, echo);
    await t.throwsAsync(startHttpServer({ host: HOST, port: server.port, backend, logger: captureLogger() }, echo));
  });
}

test('ip formatting matches node:net', (t) => {
  t.is(formatIp(Uint8Array.from([127, 0, 0, 1])), '127.0.0.1');
  t.is(formatIp(Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3])), '10.1.2.3');
  t.is(formatIp(new Uint8Array(16).fill(0, 0, 15).fill(1, 15)), '::1');
  t.is(formatIp(new Uint8Array(16)), '::');
  const doc = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
  t.is(formatIp(doc), '2001:db8:0:1::1');
  const single = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
  t.is(formatIp(single), '2001:db8:0:1:1:1:1:1');
  t.is(normalizeIp('::ffff:192.168.0.9'), '192.168.0.9');
  t.is(normalizeIp('::1'), '::1');
  t.is(normalizeIp('fe80::1'), 'fe80::1');
});

test('auto backend picks uWS here and NATIVE_HTTP_BACKEND=node overrides it', async (t) => {
  const log = captureLogger();
  const before = process.env.NATIVE_HTTP_BACKEND;
  try {
    delete process.env.NATIVE_HTTP_BACKEND;
    const auto = await startHttpServer({ host: HOST, port: 0, logger: log }, echo);
    t.is(auto.backend, 'uws');
    await auto.close();
    process.env.NATIVE_HTTP_BACKEND = 'node';
    const forced = await startHttpServer({ host: HOST, port: 0, backend: 'auto', logger: log }, echo);
    t.is(forced.backend, 'node');
    await forced.close();
  } finally {
    if (before === undefined) delete process.env.NATIVE_HTTP_BACKEND;
    else process.env.NATIVE_HTTP_BACKEND = before;
  }
  t.true(log.entries.some((e) => e.level === 'info' && (e.o as { backend?: string }).backend === 'uws'));
  t.true(log.entries.some((e) => e.level === 'info' && (e.o as { backend?: string }).backend === 'node'));
});
