import test from 'ava';
import { restRoutes } from '../../ts/api/index.js';
import { openApiPath } from '../../ts/api/openapi.js';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { toHex, stringifyExact } from '../../ts/util/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import {
  SPEC_ENDPOINTS,
  alice,
  assertMatchesSchema,
  bob,
  dave,
  routeFor,
  seedTransfers,
  submitAndConfirm,
  tokenTx,
  transfer,
} from './rest-fixture.js';

const CONTRACT = `SRC20_${'ab'.repeat(20)}`;

interface Case {
  path: string;
  status: number;
  /** Top-level fields the body must have. */
  fields?: string[];
  json?: unknown;
  /** Owned by another part of the node (metrics, audit log): only "answers, not 404, not 5xx" is checked. */
  external?: boolean;
  check?: (body: any) => void;
}

test('every spec endpoint answers with its documented top-level fields and its declared schema', async (t) => {
  const n = await startTestNode();
  t.teardown(n.stop);
  const seeded = await submitAndConfirm(n, seedTransfers());
  await waitFor(async () => (await httpJson(`${n.url}/chain/info`)).body.height >= 3, 30_000, 'three blocks');
  const validator = (await httpJson(`${n.url}/validators`)).body.validators[0].address as string;
  const head = (await httpJson(`${n.url}/chain/info`)).body.height as number;
  const fresh = transfer(dave, alice.address, 0n);
  const newcomer = randomKeyPair();
  const deploy = tokenTx(
    alice,
    JSON.stringify({ Deploy: { name: 'Gold', symbol: 'GLD', decimals: 8, supply: 1000, max_supply: 0 } }),
  );
  const xfer = tokenTx(alice, JSON.stringify({ Transfer: { contract: CONTRACT, to: bob.address, amount: 5 } }));
  const burn = tokenTx(alice, JSON.stringify({ Burn: { contract: CONTRACT, amount: 5 } }));
  const notActive = (msg: RegExp) => (b: any) => {
    t.is(b.success, false);
    t.regex(b.error, msg);
  };
  const block = [
    'index',
    'hash',
    'previous_hash',
    'timestamp',
    'tx_count',
    'validator',
    'merkle_root',
    'round',
    'has_justification',
  ];
  const a = alice.address;
  const cases: Record<string, Case> = {
    'GET /': {
      path: '/',
      status: 200,
      fields: ['name', 'version', 'chain_id', 'consensus', 'native_token', 'docs', 'jsonrpc_namespaces'],
      check: (b) => {
        t.deepEqual(Object.keys(b.docs.rest).sort(), [
          'accounts',
          'blocks',
          'chain_info',
          'epoch',
          'mempool',
          'staking',
          'tokens',
          'transactions',
          'validators',
        ]);
        t.deepEqual(Object.keys(b.docs.ops).sort(), ['explorer_builtin', 'health', 'metrics']);
        t.deepEqual(Object.keys(b.jsonrpc_namespaces).sort(), ['eth_', 'native_', 'net_', 'web3_']);
        t.is(b.docs.rpc_jsonrpc, '/rpc');
        // Every REST docs value names a registered route.
        for (const p of Object.values(b.docs.rest) as string[]) t.truthy(routeFor('GET', p), p);
      },
    },
    'GET /health': { path: '/health', status: 200, fields: ['status', 'node'] },
    'GET /native_status': {
      path: '/native_status',
      status: 200,
      fields: ['version', 'chain_id', 'consensus', 'native_token', 'sync_info', 'validators', 'uptime_seconds'],
    },
    'GET /metrics': { path: '/metrics', status: 200, external: true },
    'GET /chain/info': {
      path: '/chain/info',
      status: 200,
      check: (b) =>
        t.deepEqual(
          Object.keys(b).sort(),
          [
            'active_validators',
            'chain_id',
            'circulating_supply_native',
            'deployed_tokens',
            'height',
            'max_supply_native',
            'mempool_size',
            'next_block_reward_native',
            'total_blocks',
            'total_burned_native',
            'total_minted_native',
            'window_is_partial',
            'window_start_block',
          ],
          'exactly the spec fields',
        ),
    },
    'GET /chain/blocks': {
      path: '/chain/blocks?limit=3',
      status: 200,
      fields: ['blocks'],
      check: (b) => t.is(b.blocks.length, 3),
    },
    'GET /chain/blocks/{index}': { path: '/chain/blocks/1', status: 200, fields: block },
    'GET /blocks': { path: '/blocks?page=1&limit=2', status: 200, fields: ['blocks'] },
    'GET /blocks/{height}': { path: `/blocks/${head}`, status: 200, fields: block },
    'GET /chain/validate': { path: '/chain/validate', status: 200, fields: ['valid'], check: (b) => t.true(b.valid) },
    'GET /chain/state-root/{height}': {
      path: '/chain/state-root/1',
      status: 200,
      fields: ['height', 'state_root', 'block_hash'],
    },
    'GET /chain/performance': {
      path: '/chain/performance',
      status: 200,
      fields: ['blocks', 'avg_block_time_ms', 'tps_1h', 'tps_24h', 'last_block_time'],
      check: (b) => t.true(b.tps_1h > 0 && b.tps_24h > 0),
    },
    'GET /accounts/{address}/balance': { path: `/accounts/${a}/balance`, status: 200, fields: ['address', 'balance'] },
    'GET /accounts/{address}/nonce': { path: `/accounts/${a}/nonce`, status: 200, fields: ['address', 'nonce'] },
    'GET /accounts/{address}/history': {
      path: `/accounts/${a}/history`,
      status: 200,
      fields: ['transactions', 'total'],
      check: (b) => t.is(b.total, 5),
    },
    'GET /accounts/{address}/tokens': {
      path: `/accounts/${a}/tokens`,
      status: 200,
      check: (b) => t.deepEqual(b, { address: a, tokens: [] }),
    },
    'GET /accounts/{address}/code': {
      path: `/accounts/${a}/code`,
      status: 200,
      check: (b) => t.deepEqual(b, { address: a, code: '0x' }),
    },
    'GET /accounts/top': { path: '/accounts/top', status: 200, fields: ['holders', 'total_accounts'] },
    'GET /address/{address}/history': { path: `/address/${a}/history?limit=2&offset=1`, status: 200, fields: ['transactions'] },
    'GET /address/{address}/info': {
      path: `/address/${a}/info`,
      status: 200,
      fields: ['balance', 'nonce', 'tx_count', 'is_contract'],
      check: (b) => t.like(b, { nonce: 4, tx_count: 5, is_contract: false }),
    },
    'GET /address/{address}/proof': { path: `/address/${a}/proof`, status: 200, fields: ['address', 'state_root', 'proof'] },
    'GET /wallets/{address}': { path: `/wallets/${a}`, status: 200, fields: ['balance', 'nonce', 'tx_count', 'summary'] },
    'POST /transactions': {
      path: '/transactions',
      status: 200,
      json: { transaction: fresh },
      fields: ['success', 'txid', 'status'],
    },
    'GET /transactions': {
      path: '/transactions',
      status: 200,
      fields: ['transactions'],
      check: (b) => t.true(b.transactions.length >= 7),
    },
    'GET /transactions/{txid}': {
      path: `/transactions/${seeded[0].txid}`,
      status: 200,
      check: (b) => t.like(b, { txid: seeded[0].txid, status: 'confirmed' }),
    },
    'GET /mempool': { path: '/mempool', status: 200, fields: ['size', 'transactions'] },
    'GET /tokens': { path: '/tokens', status: 200, check: (b) => t.deepEqual(b, { tokens: [], total: 0 }) },
    // No token is deployed on this chain: every contract is unknown (404, empty body).
    'GET /tokens/{contract}': { path: `/tokens/${CONTRACT}`, status: 404 },
    'GET /tokens/{contract}/balance/{addr}': { path: `/tokens/${CONTRACT}/balance/${a}`, status: 404 },
    'GET /tokens/{contract}/holders': { path: `/tokens/${CONTRACT}/holders`, status: 404 },
    'GET /tokens/{contract}/holders-v2': { path: `/tokens/${CONTRACT}/holders-v2`, status: 404 },
    'GET /tokens/{contract}/trades': { path: `/tokens/${CONTRACT}/trades?limit=5&offset=0`, status: 404 },
    'GET /tokens/{contract}/transfers': { path: `/tokens/${CONTRACT}/transfers?page=0&limit=5`, status: 404 },
    'POST /tokens/deploy': {
      path: '/tokens/deploy',
      status: 400,
      json: { transaction: deploy },
      check: notActive(/fee must be at least 100000/),
    },
    'POST /tokens/{contract}/transfer': {
      path: `/tokens/${CONTRACT}/transfer`,
      status: 400,
      json: { transaction: xfer },
      check: notActive(/^Invalid nonce/),
    },
    'POST /tokens/{contract}/burn': {
      path: `/tokens/${CONTRACT}/burn`,
      status: 400,
      json: { transaction: burn },
      check: notActive(/^Invalid nonce/),
    },
    'GET /validators': {
      path: '/validators',
      status: 200,
      fields: ['validators'],
      check: (b) => {
        t.like(b.validators[0], { address: validator, is_active: true });
        t.true(b.validators[0].blocks_produced >= head);
        t.is(typeof b.validators[0].name, 'string');
      },
    },
    'POST /validators': {
      path: '/validators',
      status: 400,
      json: { address: newcomer.address, public_key: toHex(newcomer.publicKey), name: 'v2', caller: validator },
      check: notActive(/PoA authority set is closed/),
    },
    'GET /validators/{address}/delegators': { path: `/validators/${validator}/delegators`, status: 200, fields: ['delegators'] },
    'GET /validators/{address}/rewards': {
      path: `/validators/${validator}/rewards`,
      status: 200,
      fields: ['total_rewards', 'by_epoch'],
    },
    'GET /validators/{address}/blocks-over-time': {
      path: `/validators/${validator}/blocks-over-time`,
      status: 200,
      fields: ['series'],
      check: (b) => t.true(b.series.at(-1).blocks_produced >= head),
    },
    'GET /staking/validators': {
      path: '/staking/validators',
      status: 200,
      fields: ['validators'],
      // A new dev chain's validator is staked (100,000 coins of self-delegation).
      check: (b) => t.like(b.validators[0], { address: validator, stake: 10_000_000_000_000, commission: 0, uptime: 1 }),
    },
    'GET /staking/delegations/{address}': { path: `/staking/delegations/${a}`, status: 200, fields: ['delegations'] },
    'GET /staking/unbonding/{address}': { path: `/staking/unbonding/${a}`, status: 200, fields: ['entries'] },
    'POST /staking/register': {
      path: '/staking/register',
      status: 400,
      json: { address: a, stake: 1_500_000_000_000, commission: 500 },
      check: notActive(/^a signed RegisterValidator transaction is required/),
    },
    'GET /epoch/current': {
      path: '/epoch/current',
      status: 200,
      fields: ['epoch_number', 'start_height', 'end_height', 'progress'],
    },
    'GET /epoch/history': { path: '/epoch/history', status: 200, fields: ['epochs'] },
    'GET /stats/daily': {
      path: '/stats/daily',
      status: 200,
      fields: ['days'],
      check: (b) => {
        t.is(b.days.length, 14);
        t.true(b.days.reduce((s: number, d: any) => s + d.tx_count, 0) >= 7);
      },
    },
    'GET /richlist': { path: '/richlist', status: 200, fields: ['holders', 'total_accounts'] },
    'GET /admin/log': { path: '/admin/log', status: 200, external: true },
  };
  t.is(SPEC_ENDPOINTS.length, 50);
  for (const [method, template] of SPEC_ENDPOINTS) {
    const key = `${method} ${template}`;
    const c = cases[key];
    if (!c) {
      t.fail(`no case for ${key}`);
      continue;
    }
    const res = await httpJson(`${n.url}${c.path}`, method === 'POST' ? { method, json: c.json ?? {} } : undefined);
    if (c.external) {
      t.true(res.status !== 404 && res.status < 500, `${key}: ${res.status}`);
      continue;
    }
    t.is(res.status, c.status, `${key} -> ${res.status} ${res.text.slice(0, 200)}`);
    if (c.status === 404) t.is(res.text, '', `${key}: 404 has an empty body`);
    for (const f of c.fields ?? []) t.true(res.body !== null && f in res.body, `${key}: field ${f} in ${res.text.slice(0, 200)}`);
    c.check?.(res.body);
    if (res.status === 200) assertMatchesSchema(t, routeFor(method, template), res, key);
  }
  for (const tx of [deploy, xfer, burn])
    t.is((await fetch(`${n.url}/transactions/${tx.txid}`)).status, 404, 'refused token operations are nowhere');
});

test('GET /openapi.json: an OpenAPI 3 document with every registered route, its parameters and responses', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000 });
  t.teardown(n.stop);
  const res = await httpJson(`${n.url}/openapi.json`);
  t.is(res.status, 200);
  const doc = res.body;
  t.regex(doc.openapi, /^3\.\d+\.\d+$/);
  t.is(typeof doc.info.title, 'string');
  t.is(typeof doc.info.version, 'string');
  const ids = new Set<string>();
  for (const r of restRoutes) {
    const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()];
    if (!op) {
      t.fail(`${r.method} ${r.path} missing from the document`);
      continue;
    }
    t.truthy(op.responses?.['200'], `${r.method} ${r.path}: 200 response`);
    t.false(ids.has(op.operationId), `unique operationId ${op.operationId}`);
    ids.add(op.operationId);
    for (const [, name] of r.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
      t.truthy(
        op.parameters.find((p: any) => p.in === 'path' && p.name === name && p.required === true),
        `${r.path}: path parameter ${name}`,
      );
    }
    if (r.method === 'POST' && r.body) t.truthy(op.requestBody?.content?.['application/json']?.schema, `${r.path}: request body`);
    if (r.auth) t.truthy(op.responses['401'], `${r.path}: 401`);
  }
  // Every spec endpoint is a registered route (so it is in the document too), and $refs resolve.
  for (const [method, template] of SPEC_ENDPOINTS) t.truthy(routeFor(method, template), `${method} ${template} registered`);
  for (const [, name] of stringifyExact(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
    t.truthy(doc.components.schemas[name], `$ref ${name}`);
  }
  t.is(Object.keys(doc.paths).length, new Set(restRoutes.map((r) => r.path)).size);
});
