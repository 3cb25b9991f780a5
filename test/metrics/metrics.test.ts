import { readFileSync } from 'node:fs';
import test from 'ava';
import { Registry } from 'prom-client';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction } from '../../ts/ledger/index.js';
import {
  ApiKeyMetrics,
  createMetrics,
  METRICS_CONTENT_TYPE,
  MAX_RPC_METHOD_LABELS,
  type MetricsSources,
  registerRpcMethods,
  rpcMethodLabel,
} from '../../ts/metrics/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Strict parser of the text exposition format 0.0.4: every line is a HELP/TYPE comment, `name{labels} value`,
 * or empty (the format ignores empty lines; prom-client separates metric families with one).
 */
function parseProm(text: string): Sample[] {
  const samples: Sample[] = [];
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      if (
        !/^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$/.test(
          line,
        )
      ) {
        throw new Error(`bad comment line: ${line}`);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    let rest = m[3] ?? '';
    while (rest.length > 0) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/.exec(rest);
      if (!l) throw new Error(`bad labels in: ${line}`);
      labels[l[1]] = l[2].replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(l[0].length);
    }
    const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    if (Number.isNaN(value) && m[4] !== 'NaN') throw new Error(`bad value in: ${line}`);
    samples.push({ name: m[1], labels, value });
  }
  return samples;
}

const find = (s: Sample[], name: string, labels: Record<string, string> = {}) =>
  s.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
const value = (s: Sample[], name: string, labels: Record<string, string> = {}): number => {
  const hits = find(s, name, labels);
  if (hits.length !== 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${hits.length} samples`);
  return hits[0].value;
};

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const bob = keyPairFromMnemonic(DEV_MNEMONIC, 1);

for (const backend of ['uws', 'node'] as const) {
  test(`[${backend}] /metrics scrapes cleanly and moves with transfers, rejections, requests and RPC calls`, async (t) => {
    const n = await startTestNode({ httpBackend: backend });
    t.teardown(n.stop);
    const scrape = async () => {
      const r = await fetch(`${n.url}/metrics`);
      t.is(r.status, 200);
      t.is(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      return parseProm(await r.text());
    };
    const first = await scrape();
    for (const name of ['native_block_height', 'native_active_validators', 'native_tx_pool_size', 'native_uptime_seconds']) {
      t.is(find(first, name).length, 1, name);
    }
    t.is(value(first, 'native_active_validators'), 1);
    t.is(value(first, 'native_tx_pool_size'), 0);
    t.true(value(first, 'native_uptime_seconds') >= 0);
    const status = await httpJson(`${n.url}/native_status`);
    t.is(value(first, 'native_crypto_backend_info', { backend: status.body.crypto_backend }), 1);
    t.is(find(first, 'native_build_info', { chain_id: '7120', network: 'dev', http_backend: backend }).length, 1);
    // prom-client's process metrics
    t.true(find(first, 'process_cpu_user_seconds_total').length === 1);
    t.true(find(first, 'nodejs_eventloop_lag_seconds').length === 1);
    t.is(value(first, 'native_tx_rejected_total', { reason: 'nonce' }), 0);

    // A rejection, then a transfer that gets included.
    const bad = signTransaction(
      { from: alice.address, to: bob.address, amount: 5n, fee: 10_000n, nonce: 7n, chain_id: 7120 },
      alice,
    );
    t.is((await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: bad } })).status, 400);
    const tx = signTransaction(
      { from: alice.address, to: bob.address, amount: 5n, fee: 10_000n, nonce: 0n, chain_id: 7120 },
      alice,
    );
    t.is((await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: tx } })).status, 200);
    const confirmed = await waitFor(async () => {
      const r = await httpJson(`${n.url}/transactions/${tx.txid}`);
      return r.body?.status === 'confirmed' ? r.body : null;
    });
    await fetch(`${n.url}/accounts/${bob.address}/balance`);
    await fetch(`${n.url}/no/such/path/${bob.address}`);
    const rpc = (method: string) =>
      httpJson(`${n.url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', method, params: [], id: 1 } });
    t.is((await rpc('eth_chainId')).body.result, '0x1bd0');
    t.truthy((await rpc('no_suchMethod')).body.error);

    const s = await scrape();
    t.is(value(s, 'native_tx_rejected_total', { reason: 'nonce' }), 1);
    t.true(value(s, 'native_block_height') >= confirmed.block_index);
    t.true(value(s, 'native_blocks_produced_total') >= 1);
    t.true(value(s, 'native_tx_included_total') >= 1);
    t.true(value(s, 'native_block_transactions_sum') >= 1);
    for (const h of [
      'native_block_production_seconds',
      'native_block_execution_seconds',
      'native_block_state_root_seconds',
      'native_block_db_commit_seconds',
    ]) {
      t.true(value(s, `${h}_count`) >= 1, h);
      t.is(value(s, `${h}_bucket`, { le: '+Inf' }), value(s, `${h}_count`), h);
    }
    // Requests by route pattern, never by raw path.
    t.is(value(s, 'native_http_requests_total', { method: 'POST', route: '/transactions', status_class: '2xx' }), 1);
    t.is(value(s, 'native_http_requests_total', { method: 'POST', route: '/transactions', status_class: '4xx' }), 1);
    t.true(value(s, 'native_http_requests_total', { method: 'GET', route: '/transactions/:txid', status_class: '2xx' }) >= 1);
    t.is(value(s, 'native_http_requests_total', { method: 'GET', route: '/accounts/:address/balance', status_class: '2xx' }), 1);
    t.is(value(s, 'native_http_requests_total', { method: 'GET', route: 'unmatched', status_class: '4xx' }), 1);
    t.true(
      value(s, 'native_http_request_duration_seconds_count', { method: 'GET', route: '/metrics', status_class: '2xx' }) >= 1,
    );
    for (const x of find(s, 'native_http_requests_total')) t.false(/0x|[0-9a-f]{64}/.test(x.labels.route), x.labels.route);
    // JSON-RPC calls by method (the process-wide recorder: at least this test's calls).
    t.true(value(s, 'native_rpc_calls_total', { method: 'eth_chainId', outcome: 'ok' }) >= 1);
    t.true(value(s, 'native_rpc_calls_total', { method: 'other', outcome: 'error' }) >= 1);
    t.is(find(s, 'native_rpc_calls_total', { method: 'no_suchMethod' }).length, 0);
  });

  test(`[${backend}] rate-limit and auth-failure counters`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, apiKey: 'm'.repeat(16), rateLimitGlobal: 3 });
    t.teardown(n.stop);
    await fetch(`${n.url}/transactions`, { method: 'POST', body: '{}' });
    await fetch(`${n.url}/health`);
    await fetch(`${n.url}/health`);
    t.is((await fetch(`${n.url}/health`)).status, 429);
    const s = parseProm(await n.node.metrics.scrape());
    t.is(value(s, 'native_http_rate_limited_total', { bucket: 'global' }), 1);
    t.is(value(s, 'native_http_rate_limited_total', { bucket: 'write' }), 0);
    t.is(value(s, 'native_http_auth_failures_total', { route: '/transactions' }), 1);
    t.is(value(s, 'native_http_requests_total', { method: 'GET', route: '/health', status_class: '4xx' }), 1);
  });
}

const sources: MetricsSources = {
  height: () => 5,
  finalizedHeight: () => 5,
  activeValidators: () => 4,
  txPoolSize: () => 2,
  startedAt: Date.now(),
  cryptoBackend: 'js',
  info: () => ({ version: '0.0.0', build: 'test', chainId: 7119, network: 'mainnet', httpBackend: 'node' }),
};

test('recordRpcCall: known methods by name, anything else as other; another node sees none of it', async (t) => {
  const m = createMetrics(new Registry(), sources);
  const other = createMetrics(new Registry(), sources);
  t.is(m.contentType, METRICS_CONTENT_TYPE);
  m.recordRpcCall('eth_blockNumber', true, 0.001);
  m.recordRpcCall('eth_blockNumber', false, 0.002);
  m.recordRpcCall(`eth_${'x'.repeat(500)}`, true, 0.001);
  m.recordRpcCall('__proto__', true, 0.001);
  const s = parseProm(await m.scrape());
  t.is(value(s, 'native_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'ok' }), 1);
  t.is(value(s, 'native_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'error' }), 1);
  t.is(value(s, 'native_rpc_calls_total', { method: 'other', outcome: 'ok' }), 2);
  t.is(value(s, 'native_rpc_call_duration_seconds_count', { method: 'eth_blockNumber' }), 2);
  t.is(value(s, 'native_block_height'), 5);
  t.is(value(s, 'native_active_validators'), 4);
  t.is(value(s, 'native_tx_pool_size'), 2);
  t.is(find(parseProm(await other.scrape()), 'native_rpc_calls_total').length, 0);
});

test('RPC method labels stay bounded whatever gets registered', (t) => {
  registerRpcMethods(['native_customMethod', 'bad name!', '']);
  t.is(rpcMethodLabel('native_customMethod'), 'native_customMethod');
  t.is(rpcMethodLabel('bad name!'), 'other');
  registerRpcMethods(Array.from({ length: 1000 }, (_, i) => `zz_method${i}`));
  let labelled = 0;
  for (let i = 0; i < 1000; i++) if (rpcMethodLabel(`zz_method${i}`) !== 'other') labelled++;
  t.true(labelled < MAX_RPC_METHOD_LABELS);
});

test('HTTP labels are bounded: odd methods become other', async (t) => {
  const m = createMetrics(new Registry(), sources);
  m.observeHttp('BREW', 'unmatched', 404, 0.001);
  m.observeHttp('GET', 'unmatched', 404, 0.001);
  const s = parseProm(await m.scrape());
  t.is(value(s, 'native_http_requests_total', { method: 'other', route: 'unmatched', status_class: '4xx' }), 1);
  t.is(find(s, 'native_http_requests_total', { method: 'BREW' }).length, 0);
});

test('docs/grafana-dashboard.json is valid JSON and uses only metric names the node exports', async (t) => {
  const dash = JSON.parse(readFileSync(new URL('../../../docs/grafana-dashboard.json', import.meta.url), 'utf8'));
  const m = createMetrics(new Registry(), sources);
  // The per-key counters (--api-keys) live beside the node's metrics in the same registry.
  new ApiKeyMetrics(m.registry);
  const families = new Set([...(await m.scrape()).matchAll(/^# TYPE (\S+) /gm)].map((x) => x[1]));
  const exprs: string[] = [];
  const walk = (o: unknown): void => {
    if (Array.isArray(o)) o.forEach(walk);
    else if (o && typeof o === 'object') {
      for (const [k, v] of Object.entries(o)) {
        if (k === 'expr' && typeof v === 'string') exprs.push(v);
        else walk(v);
      }
    }
  };
  walk(dash.panels);
  t.true(exprs.length >= 20);
  const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:native|process|nodejs)_[a-z0-9_]+)/g)].map((x) => x[1])));
  for (const name of ['native_block_height', 'native_active_validators', 'native_tx_pool_size', 'native_uptime_seconds']) {
    t.true(used.has(name), `dashboard shows ${name}`);
  }
  for (const name of used) {
    t.true(families.has(name) || families.has(name.replace(/_(bucket|sum|count)$/, '')), `${name} is exported`);
  }
});
