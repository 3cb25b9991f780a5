import test from 'ava';
import { randomKeyPair } from '../../ts/ledger/keys.js';
import { toHex } from '../../ts/util/hex.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { alice, bob, post, tokenTx } from './rest-fixture.js';

const KEY = 'k'.repeat(24);
const CONTRACT = `SRC20_${'ef'.repeat(20)}`;
const OTHER = `SRC20_${'01'.repeat(20)}`;
const deployData = (o: Record<string, unknown> = {}) =>
  JSON.stringify({ Deploy: { name: 'Gold', symbol: 'GLD', decimals: 8, supply: 1_000_000, max_supply: 0, ...o } });

test('token POSTs: key-checked, validated completely, refused with the spec errors; nothing enters the mempool', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000, apiKey: KEY });
  t.teardown(n.stop);
  const auth = { 'x-api-key': KEY };
  const send = (path: string, tx: unknown) => post(n, path, { transaction: tx }, auth);
  const valid = {
    '/tokens/deploy': tokenTx(alice, deployData()),
    [`/tokens/${CONTRACT}/transfer`]: tokenTx(
      alice,
      JSON.stringify({ Transfer: { contract: CONTRACT, to: bob.address, amount: 5 } }),
    ),
    [`/tokens/${CONTRACT}/burn`]: tokenTx(alice, JSON.stringify({ Burn: { contract: CONTRACT, amount: 5 } })),
  };
  for (const [path, tx] of Object.entries(valid)) {
    const noKey = await post(n, path, { transaction: tx });
    t.is(noKey.status, 401, path);
    t.is(noKey.text, '');
  }
  // Well-formed, then refused by the rules: a deploy pays 10x MIN_TX_FEE; the contract does not exist.
  t.regex((await send('/tokens/deploy', valid['/tokens/deploy'])).body.error, /fee must be at least 100000/);
  t.regex(
    (await send(`/tokens/${CONTRACT}/transfer`, valid[`/tokens/${CONTRACT}/transfer`])).body.error,
    /unknown token contract SRC20_ef/,
  );
  // The contract in the URL may use any hex case.
  const upper = `SRC20_${'EF'.repeat(20)}`;
  t.regex((await send(`/tokens/${upper}/burn`, valid[`/tokens/${CONTRACT}/burn`])).body.error, /unknown token contract/);

  const cases: [string, unknown, string | RegExp][] = [
    [
      '/tokens/deploy',
      tokenTx(alice, JSON.stringify({ Transfer: { contract: CONTRACT, to: bob.address, amount: 1 } })),
      'expected Deploy operation in tx.data',
    ],
    ['/tokens/deploy', tokenTx(alice, ''), 'expected Deploy operation in tx.data'],
    ['/tokens/deploy', tokenTx(alice, 'not json'), 'expected Deploy operation in tx.data'],
    ['/tokens/deploy', tokenTx(alice, '{"Deploy":{},"Burn":{}}'), 'expected Deploy operation in tx.data'],
    [
      '/tokens/deploy',
      tokenTx(alice, deployData({ decimals: 19 })),
      /^invalid Deploy operation: decimals must be an integer from 0 to 18$/,
    ],
    ['/tokens/deploy', tokenTx(alice, deployData({ supply: -1 })), /^invalid Deploy operation: supply must be/],
    [
      '/tokens/deploy',
      tokenTx(alice, deployData({ supply: 10, max_supply: 5 })),
      /max_supply must be 0 \(uncapped\) or at least supply/,
    ],
    ['/tokens/deploy', tokenTx(alice, deployData({ name: '' })), /name must be a non-empty string/],
    ['/tokens/deploy', tokenTx(alice, deployData({ owner: alice.address })), /unknown field owner/],
    ['/tokens/deploy', tokenTx(alice, deployData(), bob.address), /to_address must be the zero address/],
    [`/tokens/${CONTRACT}/transfer`, tokenTx(alice, deployData()), 'expected Transfer operation in tx.data'],
    [
      `/tokens/${CONTRACT}/transfer`,
      tokenTx(alice, JSON.stringify({ Transfer: { contract: OTHER, to: bob.address, amount: 1 } })),
      'contract in data does not match URL',
    ],
    [
      `/tokens/${CONTRACT}/transfer`,
      tokenTx(alice, JSON.stringify({ Transfer: { contract: CONTRACT, to: '0x12', amount: 1 } })),
      /to must be 0x/,
    ],
    [
      `/tokens/${CONTRACT}/transfer`,
      tokenTx(alice, JSON.stringify({ Transfer: { contract: CONTRACT, to: bob.address, amount: 0 } })),
      /amount must be an integer from 1/,
    ],
    [
      `/tokens/${CONTRACT}/burn`,
      tokenTx(alice, JSON.stringify({ Burn: { contract: OTHER, amount: 1 } })),
      'contract in data does not match URL',
    ],
    [
      `/tokens/${CONTRACT}/burn`,
      tokenTx(alice, JSON.stringify({ Burn: { contract: 'SRC20_x', amount: 1 } })),
      /contract must be SRC20_/,
    ],
    ['/tokens/deploy', { ...tokenTx(alice, deployData()), chain_id: 7119 }, /wrong chain_id/],
    ['/tokens/deploy', { ...tokenTx(alice, deployData()), amount: 7 }, /txid does not match/],
    ['/tokens/deploy', { ...tokenTx(alice, deployData()), public_key: toHex(bob.publicKey) }, /public_key does not derive/],
  ];
  for (const [path, tx, expected] of cases) {
    const r = await send(path, tx);
    t.is(r.status, 400, `${path}: ${r.text}`);
    t.is(r.body.success, false);
    if (typeof expected === 'string') t.is(r.body.error, expected);
    else t.regex(r.body.error, expected);
  }
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
  t.deepEqual((await httpJson(`${n.url}/tokens`)).body, { tokens: [], total: 0 });
});

test('POST /validators (admin, key-checked) and POST /staking/register: checked, then refused until the staking module', async (t) => {
  const n = await startTestNode({ blockTimeMs: 60_000, apiKey: KEY });
  t.teardown(n.stop);
  const auth = { 'x-api-key': KEY };
  const set = (await httpJson(`${n.url}/validators`)).body;
  const validator = set.validators[0].address;
  const fresh = randomKeyPair();
  const body = { address: fresh.address, public_key: toHex(fresh.publicKey), name: 'second', caller: validator };
  t.is((await post(n, '/validators', body)).status, 401);
  const refused = await post(n, '/validators', body, auth);
  t.is(refused.status, 400);
  t.regex(refused.body.error, /^validator-set changes are not supported until the staking module \(DPoS\) is active/);
  const log = await httpJson(`${n.url}/admin/log`, { headers: auth });
  if (log.status === 200) {
    t.true(JSON.stringify(log.body).includes('add_validator'), 'the attempt is in the audit log');
  }
  const notAdmin = await post(n, '/validators', { ...body, caller: alice.address }, auth);
  t.regex(notAdmin.body.error, /caller is not an admin/);
  const existing = await post(n, '/validators', { ...body, address: validator, public_key: set.validators[0].public_key }, auth);
  t.is(existing.body.error, 'address is already a validator');
  t.is((await httpJson(`${n.url}/validators`)).body.validators.length, 1, 'the set is unchanged');

  // Staking registration is not key-checked (spec), only validated.
  const ok = { address: alice.address, stake: 1_500_000_000_000, commission: 10_000 };
  const r = await post(n, '/staking/register', ok);
  t.is(r.status, 400);
  t.deepEqual(r.body, {
    success: false,
    error: 'staking is not active yet: validator self-registration arrives with the staking module (DPoS)',
  });
  const low = await post(n, '/staking/register', { ...ok, stake: 1_499_999_999_999 });
  t.regex(low.body.error, /stake must be >= 1500000000000/);
});
