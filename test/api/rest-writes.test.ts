import test from 'ava';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { join } from 'node:path';
import { writeGenesisFile } from '../../ts/chain/index.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import { fixtureParams } from '../helpers/chain-fixture.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';
import { alice, bob, post, tokenTx, transfer } from './rest-fixture.js';

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

test('POST /validators: genesis admin only (403 otherwise), an AddAuthority through the chain before DPoS; closed from DPoS', async (t) => {
  // A chain in its PoA phase whose only authority (and genesis admin) is this node's key.
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const admin = randomKeyPair();
  saveValidatorKey(tmp.dir, admin);
  const params = fixtureParams([admin]);
  params.activation = { ...params.activation, dposBft: 1_000_000 };
  params.alloc.set(admin.address, 1_000n * 100_000_000n);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, params);
  const n = await startTestNode({ dataDir: tmp.dir, genesisFile, blockTimeMs: 100, apiKey: KEY });
  t.teardown(() => n.stop());
  const auth = { 'x-api-key': KEY };
  const fresh = randomKeyPair();
  const body = { address: fresh.address, public_key: toHex(fresh.publicKey), name: 'second', caller: admin.address };
  t.is((await post(n, '/validators', body)).status, 401);
  const notAdmin = await post(n, '/validators', { ...body, caller: alice.address }, auth);
  t.is(notAdmin.status, 403);
  t.regex(notAdmin.body.error, /not the genesis admin/);
  const badKey = await post(n, '/validators', { ...body, public_key: toHex(bob.publicKey) }, auth);
  t.is(badKey.body.error, 'public_key does not derive to address');
  const ok = await post(n, '/validators', body, auth);
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { success: true, address: fresh.address, status: 'pending_in_mempool' });
  await waitFor(async () => (await httpJson(`${n.url}/validators`)).body.validators.length === 2, 30_000, 'the new authority');
  const set = (await httpJson(`${n.url}/validators`)).body;
  t.true(set.validators.some((v: any) => v.address === fresh.address && v.is_active && v.name === 'second'));
  t.is((await post(n, '/validators', body, auth)).body.error, 'address is already a validator');
  const log = await httpJson(`${n.url}/admin/log`, { headers: auth });
  t.true(JSON.stringify(log.body).includes('add_validator'), 'the attempts are in the audit log');
});

test('POST /validators is closed from DPoS; POST /staking/register takes a signed RegisterValidator only', async (t) => {
  const n = await startTestNode({ blockTimeMs: 100, apiKey: KEY });
  t.teardown(n.stop);
  const auth = { 'x-api-key': KEY };
  const validator = (await httpJson(`${n.url}/validators`)).body.validators[0].address;
  const fresh = randomKeyPair();
  const closed = await post(
    n,
    '/validators',
    { address: fresh.address, public_key: toHex(fresh.publicKey), name: 'late', caller: validator },
    auth,
  );
  t.is(closed.status, 400);
  t.regex(closed.body.error, /PoA authority set is closed/);

  const unsigned = await post(n, '/staking/register', { address: alice.address, stake: 1_500_000_000_000, commission: 500 });
  t.is(unsigned.status, 400);
  t.regex(unsigned.body.error, /^a signed RegisterValidator transaction is required/);
  const low = tokenTx(alice, JSON.stringify({ RegisterValidator: { name: 'a', stake: 1_499_999_999_999, commission_bps: 0 } }));
  t.regex((await post(n, '/staking/register', { transaction: low })).body.error, /below the minimum self-stake/);
  const wrong = tokenTx(alice, JSON.stringify({ Unjail: {} }));
  t.is(
    (await post(n, '/staking/register', { transaction: wrong })).body.error,
    'expected RegisterValidator operation in tx.data',
  );
  // Dev accounts hold 10,000 coins: bob funds alice past the 15,000-coin minimum.
  const fund = transfer(bob, alice.address, 0n, 600_000_000_000n);
  t.is((await post(n, '/transactions', { transaction: fund }, auth)).status, 200);
  await waitFor(
    async () => (await httpJson(`${n.url}/transactions/${fund.txid}`)).body?.status === 'confirmed',
    30_000,
    'funding',
  );
  const reg = tokenTx(
    alice,
    JSON.stringify({ RegisterValidator: { name: 'alice', stake: 1_500_000_000_000, commission_bps: 500 } }),
  );
  const r = await post(n, '/staking/register', { transaction: reg });
  t.is(r.status, 200, r.text);
  t.like(r.body, { success: true, address: alice.address, stake: 1_500_000_000_000, commission: 500 });
  await waitFor(
    async () => (await httpJson(`${n.url}/transactions/${reg.txid}`)).body?.status === 'confirmed',
    30_000,
    'inclusion',
  );
  const sv = (await httpJson(`${n.url}/staking/validators`)).body;
  t.true(sv.validators.some((v: any) => v.address === alice.address && v.stake === 1_500_000_000_000 && v.commission === 0.05));
  const rpc = (await post(n, '/rpc', { jsonrpc: '2.0', id: 1, method: 'native_getValidatorSet', params: [] }, auth)).body.result;
  t.is(rpc.total_count, sv.total);
  t.true(rpc.validators.some((v: any) => v.address === alice.address && v.stake === '0x32d26d12e980b600000'));
});
