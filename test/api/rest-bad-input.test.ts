import test from 'ava';
import { httpJson, startTestNode } from '../helpers/node.js';
import { alice } from './rest-fixture.js';

const HUGE = '99999999999999999999';
const BAD_ADDRESSES = [
  '0x123',
  `0x${'g'.repeat(40)}`,
  'f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  `0x${'a'.repeat(41)}`,
  `0x${'a'.repeat(39)}`,
  `0x${'a'.repeat(42)}`,
  'null',
];
const BAD_HEIGHTS = ['abc', '-1', '1.5', HUGE, '0x10', '1e3'];
const BAD_NUMBERS = ['abc', '-1', '1.5', HUGE, '0x10', '1e3', 'true'];
const BAD_CONTRACTS = [
  'SRC20_xyz',
  `SRC20_${'a'.repeat(39)}`,
  `src20_${'a'.repeat(40)}`,
  `SRC20_${'g'.repeat(40)}`,
  `0x${'a'.repeat(40)}`,
];
const CONTRACT = `SRC20_${'cd'.repeat(20)}`;
const A = alice.address;

test('bad path and query parameters get 400 { success: false, error } with a clear message, never 5xx', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000 });
  t.teardown(n.stop);
  const paths: string[] = [];
  const addressTemplates = [
    '/accounts/{a}/balance',
    '/accounts/{a}/nonce',
    '/accounts/{a}/history',
    '/accounts/{a}/tokens',
    '/accounts/{a}/code',
    '/address/{a}/history',
    '/address/{a}/info',
    '/address/{a}/proof',
    '/wallets/{a}',
    '/validators/{a}/delegators',
    '/validators/{a}/rewards',
    '/validators/{a}/blocks-over-time',
    '/staking/delegations/{a}',
    '/staking/unbonding/{a}',
    `/tokens/${CONTRACT}/balance/{a}`,
  ];
  for (const tpl of addressTemplates) for (const a of BAD_ADDRESSES) paths.push(tpl.replace('{a}', a));
  for (const tpl of ['/chain/blocks/{h}', '/blocks/{h}', '/chain/state-root/{h}'])
    for (const h of BAD_HEIGHTS) paths.push(tpl.replace('{h}', h));
  for (const tpl of [
    '/tokens/{c}',
    '/tokens/{c}/holders',
    '/tokens/{c}/holders-v2',
    '/tokens/{c}/trades',
    '/tokens/{c}/transfers',
    `/tokens/{c}/balance/${A}`,
  ]) {
    for (const c of BAD_CONTRACTS) paths.push(tpl.replace('{c}', c));
  }
  const listPaths = [
    '/chain/blocks',
    '/blocks',
    `/accounts/${A}/history`,
    `/address/${A}/history`,
    '/transactions',
    '/epoch/history',
    '/richlist',
    '/accounts/top',
    `/tokens/${CONTRACT}/trades`,
    `/tokens/${CONTRACT}/transfers`,
  ];
  for (const p of listPaths) for (const v of BAD_NUMBERS) paths.push(`${p}?limit=${v}`);
  for (const p of [`/accounts/${A}/history`, `/address/${A}/history`, '/transactions', `/tokens/${CONTRACT}/trades`]) {
    paths.push(
      `${p}?offset=-1`,
      `${p}?offset=${HUGE}`,
      `${p}?page=1.5`,
      `${p}?offset=1&page=1`,
      `${p}?offset=100001`,
      `${p}?page=1000001&limit=100`,
    );
  }
  paths.push(
    '/chain/blocks?page=-1',
    `/chain/blocks?page=${HUGE}`,
    '/transactions/zz',
    '/transactions/0x123',
    `/transactions/${'g'.repeat(64)}`,
  );
  for (const p of paths) {
    const r = await httpJson(`${n.url}${p}`);
    t.is(r.status, 400, `${p} -> ${r.status} ${r.text.slice(0, 120)}`);
    t.is(r.body?.success, false, p);
    t.true(typeof r.body?.error === 'string' && r.body.error.length > 5, `${p}: ${r.text}`);
  }
  // A few exact messages.
  const msg = async (p: string) => (await httpJson(`${n.url}${p}`)).body.error;
  t.is(await msg('/accounts/0x123/history'), 'invalid address: expected 0x + 40 hex characters');
  t.is(await msg('/tokens/SRC20_xyz'), 'invalid token contract: expected SRC20_ + 40 hex characters');
  t.is(await msg(`/address/${A}/history?offset=1&page=1`), 'use either offset or page, not both');
  t.regex(await msg(`/transactions?limit=${HUGE}`), /invalid query parameter limit/);
  t.regex(await msg('/transactions?offset=100001'), /offset too large/);
  t.log(`${paths.length} bad requests checked`);
});

test('unknown routes, txids, blocks, token contracts and non-validators get 404 with an empty body', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000 });
  t.teardown(n.stop);
  const notValidator = `0x${'12'.repeat(20)}`;
  for (const p of [
    '/nope',
    '/chain',
    '/accounts',
    '/accounts/top/extra',
    `/transactions/${'ab'.repeat(32)}`,
    `/transactions/0x${'ab'.repeat(32)}`,
    '/chain/blocks/999999',
    '/blocks/999999',
    '/chain/state-root/999999',
    `/tokens/${CONTRACT}`,
    `/tokens/${CONTRACT.toLowerCase().replace('src20_', 'SRC20_')}/holders`,
    `/tokens/${CONTRACT}/holders-v2`,
    `/tokens/${CONTRACT}/trades?limit=5`,
    `/tokens/${CONTRACT}/transfers`,
    `/tokens/${CONTRACT}/balance/${A}`,
    `/validators/${notValidator}/delegators`,
    `/validators/${notValidator}/rewards`,
    `/validators/${notValidator}/blocks-over-time`,
  ]) {
    const r = await fetch(`${n.url}${p}`);
    t.is(r.status, 404, p);
    t.is(await r.text(), '', `${p}: empty body`);
  }
  // Wrong method on a GET-only path is an unknown route too.
  t.is((await fetch(`${n.url}/chain/info`, { method: 'POST', body: '{}' })).status, 404);
});

test('bad POST bodies (not JSON, wrong shapes, wrong types, huge numbers, unknown fields) get 400, never 5xx', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000 });
  t.teardown(n.stop);
  const raw = (path: string, body: string) =>
    httpJson(`${n.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const validator = (await httpJson(`${n.url}/validators`)).body.validators[0].address;
  const txShapes = [
    '',
    '{',
    'null',
    '[]',
    '"x"',
    '5',
    '{"transaction": 5}',
    '{"transaction": {}}',
    '{"transaction": {"amount": 1e400}}',
    '{"tx": {}}',
  ];
  for (const path of ['/transactions', '/tokens/deploy', `/tokens/${CONTRACT}/transfer`, `/tokens/${CONTRACT}/burn`]) {
    for (const body of txShapes) {
      const r = await raw(path, body);
      t.is(r.status, 400, `${path} ${body} -> ${r.status} ${r.text}`);
      t.is(r.body?.success, false);
    }
    const extra = await raw(path, '{"transaction": {}, "extra": 1}');
    t.is(extra.status, 400);
    t.regex(extra.body.error, /unknown field extra|missing field/);
  }
  const okValidator = { address: A, public_key: `04${'a'.repeat(128)}`, name: 'x', caller: validator };
  const vCases: [unknown, RegExp][] = [
    [{}, /missing field address/],
    [{ ...okValidator, address: '0x123' }, /address has an invalid format/],
    [{ ...okValidator, public_key: 'abcd' }, /public_key has an invalid format/],
    [{ ...okValidator, name: '' }, /name must have at least 1/],
    [{ ...okValidator, name: 'n'.repeat(65) }, /name must have at most 64/],
    [{ ...okValidator, name: 5 }, /name must be a string/],
    [{ ...okValidator, caller: 7 }, /caller must be a string/],
    [{ ...okValidator, role: 'admin' }, /unknown field role/],
    [okValidator, /public_key does not derive to address/],
  ];
  for (const [body, re] of vCases) {
    const r = await httpJson(`${n.url}/validators`, { method: 'POST', json: body });
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.body.error, re);
  }
  const okStake = { address: A, stake: 1_500_000_000_000, commission: 0 };
  const sCases: [string, RegExp][] = [
    ['{', /malformed JSON/],
    ['[]', /must be an object/],
    ['', /body required/],
    // The unsigned spec body is refused whatever it holds: registration takes a signed transaction.
    [JSON.stringify({ ...okStake, stake: 1_499_999_999_999 }), /^a signed RegisterValidator transaction is required/],
    [JSON.stringify(okStake), /^a signed RegisterValidator transaction is required/],
    [JSON.stringify({ transaction: 5 }), /transaction must be an object/],
    [JSON.stringify({ transaction: {} }), /missing field/],
  ];
  for (const [body, re] of sCases) {
    const r = await raw('/staking/register', body);
    t.is(r.status, 400, body);
    t.regex(r.body?.error ?? '', re, body);
  }
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
});
