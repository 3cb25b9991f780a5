/**
 * What a new user meets in the first hour: the dev chain open to local tools, a clear refusal when the port or
 * the data dir is taken, JSON-RPC at the root URL, --help / --version, readable logs.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { NODE_FLAGS, nodeHelp } from '../../ts/node/flags.js';
import { prettyLine, roundNumbers } from '../../ts/node/log.js';
import { spawnNode } from '../helpers/child-node.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const MAIN = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));
const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** Run the node binary to its end; its exit code and everything it printed. */
function runNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Start a node binary, then ask a second one for something in use; the first is stopped afterwards. */
async function secondNode(t: { teardown(fn: () => void): void }, first: string[], second: (port: number) => string[], env = {}) {
  const a = await spawnNode(first, env);
  t.teardown(() => a.proc.kill('SIGKILL'));
  const port = Number(new URL(a.url).port);
  const b = await runNode(['--dev', ...second(port)], env);
  // The first node still answers alone.
  const health = await httpJson(`${a.url}/health`);
  return { a, b, port, healthStatus: health.status };
}

test('--dev: the first log line says no rate limits and CORS *; 100 writes in a row are not throttled', async (t) => {
  const data = tempDir();
  t.teardown(data.cleanup);
  // Without the test helpers' raised limits: the dev chain's own defaults.
  const n = await spawnNode(['--data-dir', data.dir], { NATIVE_RATE_LIMIT_GLOBAL: '', NATIVE_RATE_LIMIT_WRITE: '' });
  t.teardown(() => n.proc.kill('SIGKILL'));
  const first = JSON.parse(n.logs[0]) as { msg: string; rate_limits: string; cors_origin: string };
  t.regex(first.msg, /^dev chain 7120: no rate limits, CORS \*/);
  t.is(first.cors_origin, '*');
  for (let i = 0; i < 100; i++) {
    const r = await httpJson(`${n.url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: i, method: 'eth_chainId' } });
    t.is(r.status, 200, `request ${i}`);
  }
  const cors = await fetch(`${n.url}/health`, { headers: { origin: 'http://localhost:3000' } });
  t.is(cors.headers.get('access-control-allow-origin'), '*');
});

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] a second node on a port in use fails with "port N is in use" and exits non-zero`, async (t) => {
    const dirs = [tempDir(), tempDir()];
    t.teardown(() => dirs.forEach((d) => d.cleanup()));
    const env = { NATIVE_HTTP_BACKEND: backend };
    const { b, port, healthStatus } = await secondNode(
      t,
      ['--data-dir', dirs[0].dir],
      (p) => ['--port', String(p), '--data-dir', dirs[1].dir],
      env,
    );
    t.is(b.code, 1, b.stdout + b.stderr);
    t.regex(b.stderr, new RegExp(`^error: port ${port} is in use on 127\\.0\\.0\\.1`));
    t.false(b.stderr.includes('    at '), 'no stack trace');
    t.is(healthStatus, 200);
  });
}

test('a data dir in use by another node: a plain message naming the lock file, exit 1', async (t) => {
  const data = tempDir();
  t.teardown(data.cleanup);
  const { b } = await secondNode(t, ['--data-dir', data.dir], () => ['--port', '0', '--data-dir', data.dir]);
  t.is(b.code, 1, b.stdout + b.stderr);
  t.is(
    b.stderr,
    `error: data dir ${data.dir} is in use by another node (lock file ${data.dir}/db/LOCK); stop that node or choose --data-dir\n`,
  );
});

test('JSON-RPC at the root: POST / answers like POST /rpc (batch too); GET / is still the discovery document', async (t) => {
  const n = await startTestNode();
  t.teardown(n.stop);
  const one = await httpJson(`${n.url}/`, { method: 'POST', json: { jsonrpc: '2.0', id: 7, method: 'eth_chainId' } });
  t.deepEqual(one.body, { jsonrpc: '2.0', id: 7, result: '0x1bd0' });
  const batch = await httpJson(`${n.url}/`, {
    method: 'POST',
    json: [
      { jsonrpc: '2.0', id: 1, method: 'net_version' },
      { jsonrpc: '2.0', id: 2, method: 'eth_nope' },
    ],
  });
  t.is(batch.body[0].result, '7120');
  t.is(batch.body[1].error.code, -32601);
  const root = await httpJson(`${n.url}/`);
  t.is(root.status, 200);
  t.is(root.body.docs.rpc_jsonrpc, '/rpc');
});

test('--help and --version exit 0; --help lists every flag with its variable and default, as the README table', async (t) => {
  const help = await runNode(['--help']);
  t.is(help.code, 0);
  t.is(help.stdout, nodeHelp('0.1.0'));
  const readme = readFileSync(README, 'utf8');
  for (const f of NODE_FLAGS) {
    t.true(help.stdout.includes(`--${f.name}`), f.name);
    if (f.env) t.true(help.stdout.includes(f.env), f.env);
    if (f.name === 'help' || f.name === 'version') continue;
    t.true(readme.includes(`\`--${f.name}`), `README lists --${f.name}`);
    if (f.env) t.true(readme.includes(`\`${f.env}\``), `README lists ${f.env}`);
  }
  const version = await runNode(['--version']);
  t.is(version.code, 0);
  t.regex(version.stdout, /^native-node 0\.1\.0 \(node v\d+/);
  const bad = await runNode(['--bogus']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /config error: .*--bogus.*see --help/);
});

test('log lines: numbers rounded in both formats; the pretty form is one readable line per event', (t) => {
  t.deepEqual(roundNumbers({ executeMs: 12.345678, height: 7, nested: { x: [0.123456] }, s: 'a' }), {
    executeMs: 12.35,
    height: 7,
    nested: { x: [0.12] },
    s: 'a',
  });
  const line = JSON.stringify({
    level: 30,
    time: Date.UTC(2026, 0, 1, 12, 34, 56, 789),
    node: 'n',
    msg: 'block produced',
    height: 5,
    totalMs: 1.5,
    who: 'a b',
  });
  t.is(prettyLine(line), '12:34:56.789 INFO  block produced height=5 totalMs=1.5 who="a b"\n');
  const err = JSON.stringify({
    level: 50,
    time: 0,
    msg: 'failed',
    err: { message: 'boom', stack: 'Error: boom\n    at x (f.js:1:1)' },
  });
  t.is(prettyLine(err), '00:00:00.000 ERROR failed err=boom\n    at x (f.js:1:1)\n');
  t.is(prettyLine('not json'), 'not json');
});

test('--log-format pretty: the node logs readable lines', async (t) => {
  const data = tempDir();
  t.teardown(data.cleanup);
  const proc = spawn(process.execPath, [MAIN, '--dev', '--port', '0', '--data-dir', data.dir, '--log-format', 'pretty'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => proc.kill('SIGKILL'));
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  await waitFor(() => out.includes('API listening'), 90_000, 'the API listening line');
  const lines = out.split('\n');
  t.regex(lines[0], /^\d\d:\d\d:\d\d\.\d{3} INFO {2}dev chain 7120: no rate limits, CORS \* /);
  t.regex(out, /INFO {2}API listening host=127\.0\.0\.1 port=\d+/);
  t.false(out.includes('{"level"'));
});
