/**
 * Issue 26 section 2: graceful drain on SIGTERM, on both HTTP backends (in-process), and the signals of
 * the node binary (a second signal skips the wait).
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { WebSocket } from 'ws';
import { drainAndStop } from '../../ts/node/shutdown.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const quietLog = { info: () => undefined, warn: () => undefined };

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] drain: /ready 503 at once while answering; listener closes; an in-flight request finishes; WebSocket 1001; node stops`, async (t) => {
    const n = await startTestNode({ httpBackend: backend });
    let stopped = false;
    t.teardown(() => (stopped ? undefined : n.stop()));
    const port = n.node.http.port;
    // A WebSocket client (the dev chain serves JSON-RPC over WebSocket on /rpc).
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const wsClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    // A request in flight across the whole drain: its headers now, the rest of its body after the listener closed.
    const body = '{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}';
    const slow = connect(port, '127.0.0.1');
    await new Promise((resolve) => slow.once('connect', resolve));
    let slowAnswer = '';
    slow.on('data', (d) => {
      slowAnswer += d.toString();
    });
    slow.write(
      `POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await waitFor(() => n.node.http.inFlight() === 1, 10_000, 'the request in flight');

    const skip = new AbortController();
    const t0 = Date.now();
    const done = drainAndStop(n.node, { drainSecs: 1.5, shutdownGraceSecs: 20, skip: skip.signal, log: quietLog });
    // Draining: not ready, still answering, each answer closing its connection.
    const ready = await httpJson(`${n.url}/ready`);
    t.is(ready.status, 503);
    t.deepEqual(ready.body.reasons, ['draining: the node is shutting down']);
    t.is(ready.headers.get('connection'), 'close');
    const served = await httpJson(`${n.url}/chain/blocks/0`);
    t.is(served.status, 200);
    t.true(Date.now() - t0 < 1500, 'served within the drain window');
    // The drain ends: WebSocket clients are told the server is going away, the listener closes.
    const closed = await wsClosed;
    t.is(closed.code, 1001);
    t.is(closed.reason, 'going away');
    t.true(Date.now() - t0 >= 1400, `closed after the drain (${Date.now() - t0} ms)`);
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const c = connect(port, '127.0.0.1');
          c.once('connect', () => {
            c.destroy();
            resolve(false);
          });
          c.once('error', () => resolve(true));
        }),
      10_000,
      'the listener to close',
    );
    // The in-flight request still finishes: the grace period waits for it.
    slow.write(body.slice(10));
    await waitFor(() => slowAnswer.includes('"result":"0x1bd0"'), 10_000, 'the in-flight answer');
    t.regex(slowAnswer, /^HTTP\/1\.1 200/);
    await done;
    stopped = true;
    t.true(n.node.draining);
    slow.destroy();
    await n.stop();
  });
}

test('drain: the grace period is bounded; an abort (second signal) skips the waits', async (t) => {
  const n = await startTestNode({ httpBackend: 'node' });
  const port = n.node.http.port;
  const slow = connect(port, '127.0.0.1');
  await new Promise((resolve) => slow.once('connect', resolve));
  slow.on('error', () => undefined);
  slow.write('POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{');
  await waitFor(() => n.node.http.inFlight() === 1, 10_000, 'the request in flight');
  const skip = new AbortController();
  const warnings: object[] = [];
  const t0 = Date.now();
  const done = drainAndStop(n.node, {
    drainSecs: 60,
    shutdownGraceSecs: 60,
    skip: skip.signal,
    log: { info: () => undefined, warn: (o) => warnings.push(o) },
  });
  await waitFor(async () => (await httpJson(`${n.url}/ready`)).status === 503, 10_000, '503');
  skip.abort();
  await done;
  t.true(Date.now() - t0 < 20_000, `stopped at once after the abort (${Date.now() - t0} ms)`);
  t.deepEqual(warnings, [{ in_flight: 1 }]);
  slow.destroy();
  await n.stop();
});

test('node binary: SIGTERM drains (/ready 503, still serving), a second SIGTERM skips the wait; exit 0', async (t) => {
  const dir = tempDir();
  t.teardown(dir.cleanup);
  const main = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));
  const p = spawn(
    process.execPath,
    [
      main,
      '--network',
      'testnet',
      '--port',
      '0',
      '--data-dir',
      dir.dir,
      '--grpc-port',
      'off',
      '--log-format',
      'json',
      '--drain-secs',
      '60',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  p.stdout.on('data', (d) => {
    out += d;
  });
  p.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => p.on('exit', resolve));
  t.teardown(() => {
    if (p.exitCode === null) p.kill('SIGKILL');
  });
  const port = await waitFor(
    () => /"msg":"API listening"/.test(out) && /"port":(\d+),"http_backend"/.exec(out)?.[1],
    60_000,
    'the API',
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await httpJson(`${url}/ready`)).status === 200, 30_000, 'ready');
  p.kill('SIGTERM');
  await waitFor(async () => (await httpJson(`${url}/ready`)).status === 503, 10_000, 'not ready while draining');
  t.is((await httpJson(`${url}/health`)).status, 200, 'still serving');
  const t0 = Date.now();
  p.kill('SIGTERM');
  t.is(await exited, 0);
  t.true(Date.now() - t0 < 30_000, `the second signal skipped the 60 s drain (${Date.now() - t0} ms)`);
  t.regex(out, /second signal: skipping the drain/);
  t.regex(out, /"msg":"node stopped"/);
});
