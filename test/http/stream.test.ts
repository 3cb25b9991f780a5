/**
 * Streamed response bodies (HttpResponse.stream), identical on both backends: chunks in order with chunked
 * encoding, back-pressure and drain, the client going away, server close, the concurrency slot released at
 * stream start.
 */
import { request } from 'node:http';
import test from 'ava';
import { type HttpBodyStream, type HttpHandler, startHttpServer } from '../../ts/http/index.js';
import { waitFor } from '../helpers/util.js';

const BACKENDS = ['uws', 'node'] as const;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function start(backend: (typeof BACKENDS)[number], handler: HttpHandler, maxConcurrent = 500) {
  return startHttpServer({ host: '127.0.0.1', port: 0, backend, logger: quiet, maxConcurrent }, handler);
}

for (const backend of BACKENDS) {
  test(`${backend}: a streamed body arrives chunk by chunk, in order, with its status and headers`, async (t) => {
    let body!: HttpBodyStream;
    const server = await start(backend, () => ({
      status: 201,
      headers: { 'content-type': 'application/x-test' },
      stream: (b) => {
        body = b;
        b.write(Buffer.from('one,'));
      },
    }));
    t.teardown(() => server.close());
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    t.is(res.status, 201);
    t.is(res.headers.get('content-type'), 'application/x-test');
    t.is(res.headers.get('transfer-encoding'), 'chunked');
    const reader = res.body!.getReader();
    const first = await reader.read();
    t.is(Buffer.from(first.value!).toString(), 'one,');
    t.true(body.write(Buffer.from('two,')));
    body.end(Buffer.from('three'));
    t.true(body.closed);
    t.false(body.write(Buffer.from('ignored')), 'nothing after end');
    let rest = '';
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += Buffer.from(r.value).toString();
    }
    t.is(rest, 'two,three');
  });

  test(`${backend}: back-pressure: a writer that waits for onDrain is held back while the client does not read`, async (t) => {
    const TOTAL = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 7);
    let written = 0;
    let drains = 0;
    let waiting = false;
    const server = await start(backend, () => ({
      status: 200,
      stream: (b) => {
        const pump = () => {
          waiting = false;
          while (written < TOTAL) {
            written += chunk.length;
            if (!b.write(chunk)) {
              waiting = true;
              b.onDrain(() => {
                drains++;
                pump();
              });
              return;
            }
          }
          b.end();
        };
        pump();
      },
    }));
    t.teardown(() => server.close());
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/' }, resolve);
      req.on('error', reject);
      req.end();
    });
    res.pause();
    // The client reads nothing: once the socket buffers are full the writer waits, far short of the total.
    await waitFor(() => waiting, 10_000, 'the writer waiting for a drain');
    const heldAt = written;
    t.true(heldAt < TOTAL, `held back at ${heldAt} of ${TOTAL} bytes`);
    let received = 0;
    res.on('data', (d: Buffer) => {
      received += d.length;
    });
    await new Promise((resolve) => {
      res.on('end', resolve);
      res.resume();
    });
    t.is(received, TOTAL);
    t.true(drains >= 1);
  });

  test(`${backend}: the client going away closes the stream (onClose); the slot is free while it runs`, async (t) => {
    let closed = 0;
    let body!: HttpBodyStream;
    const server = await start(
      backend,
      (req) =>
        req.path === '/stream'
          ? {
              status: 200,
              stream: (b) => {
                body = b;
                b.onClose(() => closed++);
                b.write(Buffer.from('x'));
              },
            }
          : { status: 200, body: 'plain' },
      1,
    );
    t.teardown(() => server.close());
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${server.port}/stream`, { signal: ac.signal });
    await res.body!.getReader().read();
    // maxConcurrent 1: an open stream does not hold the request slot.
    const plain = await fetch(`http://127.0.0.1:${server.port}/plain`);
    t.is(await plain.text(), 'plain');
    ac.abort();
    await waitFor(() => closed === 1, 10_000, 'onClose');
    t.true(body.closed);
    t.false(body.write(Buffer.from('late')));
  });

  test(`${backend}: closing the server closes open streams; HEAD answers without running the writer`, async (t) => {
    let closed = false;
    let ran = 0;
    const server = await start(backend, () => ({
      status: 200,
      stream: (b) => {
        ran++;
        b.onClose(() => {
          closed = true;
        });
        b.write(Buffer.from('x'));
      },
    }));
    const head = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'HEAD' });
    t.is(head.status, 200);
    t.is(ran, 0);
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    await res.body!.getReader().read();
    t.is(ran, 1);
    await server.close();
    await waitFor(() => closed, 10_000, 'onClose at server close');
    t.pass();
  });

  test(`${backend}: a stream with a body of its own is a handler bug: 500`, async (t) => {
    const server = await start(backend, () => ({ status: 200, body: 'x', stream: () => undefined }));
    t.teardown(() => server.close());
    t.is((await fetch(`http://127.0.0.1:${server.port}/`)).status, 500);
  });
}
