import test from 'ava';
import { tokenContractAddress } from '../../ts/modules/index.js';
import { type KeyPair, type SignedTransaction, signTransaction, ZERO_ADDRESS } from '../../ts/ledger/index.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import { CHAIN_ID, alice, bob, carol, post } from './rest-fixture.js';

const nonces = new Map<string, bigint>();
/** A signed token operation with the sender's next nonce (tracked locally) and its minimum fee. */
function op(key: KeyPair, body: Record<string, unknown>, fee = 10_000n): SignedTransaction {
  const nonce = nonces.get(key.address) ?? 0n;
  nonces.set(key.address, nonce + 1n);
  return signTransaction(
    { from: key.address, to: ZERO_ADDRESS, amount: 0n, fee, nonce, data: JSON.stringify(body), chain_id: CHAIN_ID },
    key,
  );
}
/** Undo the local nonce of a refused submission. */
const refused = (key: KeyPair): void => void nonces.set(key.address, (nonces.get(key.address) ?? 1n) - 1n);

async function confirmed(n: TestNode, txid: string): Promise<any> {
  return waitFor(
    async () => {
      const r = await httpJson(`${n.url}/transactions/${txid}`);
      return r.body?.status === 'confirmed' ? r.body : null;
    },
    30_000,
    `inclusion of ${txid}`,
  );
}

async function submit(n: TestNode, tx: SignedTransaction, path = '/transactions'): Promise<void> {
  const r = await post(n, path, { transaction: tx });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  await confirmed(n, tx.txid);
}

async function expectRefused(
  t: any,
  n: TestNode,
  key: KeyPair,
  tx: SignedTransaction,
  error: RegExp | string,
  path = '/transactions',
) {
  const before = await httpJson(`${n.url}/accounts/${key.address}/nonce`);
  const r = await post(n, path, { transaction: tx });
  refused(key);
  t.is(r.status, 400, `${path}: ${r.text}`);
  t.is(r.body.success, false);
  // Operation failures come from admission, which words them as every refused transaction.
  if (typeof error === 'string') t.is(r.body.error.replace(/^Invalid transaction: /, ''), error);
  else t.regex(r.body.error, error);
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0, 'nothing entered the mempool');
  t.deepEqual((await httpJson(`${n.url}/accounts/${key.address}/nonce`)).body, before.body, 'no state change');
}

test('SRC-20: every operation succeeds through REST and JSON-RPC, every failure is a 400 with no state change', async (t) => {
  const n = await startTestNode({ blockTimeMs: 100 });
  t.teardown(n.stop);
  nonces.clear();

  // Deploy through POST /tokens/deploy (10x MIN_TX_FEE).
  const deploy = op(
    alice,
    { Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1_000_000, max_supply: 1_500_000 } },
    100_000n,
  );
  const contract = tokenContractAddress(alice.address, deploy.nonce);
  const accepted = await post(n, '/tokens/deploy', { transaction: deploy });
  t.is(accepted.status, 200, accepted.text);
  t.like(accepted.body, {
    success: true,
    deployer: alice.address,
    contract,
    name: 'Gold',
    symbol: 'GLD',
    total_supply: 1_000_000,
    max_supply: 1_500_000,
    status: 'pending_in_mempool',
  });
  await confirmed(n, deploy.txid);
  const token = (await httpJson(`${n.url}/tokens/${contract}`)).body;
  t.like(token, {
    contract,
    name: 'Gold',
    symbol: 'GLD',
    decimals: 2,
    supply: 1_000_000,
    max_supply: 1_500_000,
    owner: alice.address,
    holders: 1,
  });
  t.deepEqual((await httpJson(`${n.url}/tokens`)).body.total, 1);
  t.is((await httpJson(`${n.url}/chain/info`)).body.deployed_tokens, 1);

  // A deploy below the 10x fee is refused statelessly.
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Deploy: { name: 'X', symbol: 'X', decimals: 0, supply: 1, max_supply: 0 } }),
    /fee must be at least 100000/,
  );

  // Transfer through the token POST, then TransferFrom after an Approve, Mint and Burn through /transactions.
  await submit(n, op(alice, { Transfer: { contract, to: bob.address, amount: 250_000 } }), `/tokens/${contract}/transfer`);
  await submit(n, op(alice, { Approve: { contract, spender: bob.address, amount: 100_000 } }));
  await submit(n, op(bob, { TransferFrom: { contract, from: alice.address, to: carol.address, amount: 40_000 } }));
  await submit(n, op(alice, { Mint: { contract, to: carol.address, amount: 500_000 } }));
  await submit(n, op(carol, { Burn: { contract, amount: 40_000 } }), `/tokens/${contract}/burn`);
  const bal = async (a: string) => (await httpJson(`${n.url}/tokens/${contract}/balance/${a}`)).body.balance;
  t.is(await bal(alice.address), 710_000);
  t.is(await bal(bob.address), 250_000);
  t.is(await bal(carol.address), 500_000);
  t.is((await httpJson(`${n.url}/tokens/${contract}`)).body.supply, 1_460_000);

  // Holders (sorted, with percentages) and the transfer feeds.
  const holders = (await httpJson(`${n.url}/tokens/${contract}/holders-v2`)).body;
  t.is(holders.total, 3);
  t.deepEqual(
    holders.holders.map((h: any) => [h.address, h.balance]),
    [
      [alice.address, 710_000],
      [carol.address, 500_000],
      [bob.address, 250_000],
    ],
  );
  t.is(holders.holders[0].percentage, 48.630136);
  const legacy = (await httpJson(`${n.url}/tokens/${contract}/holders`)).body;
  t.deepEqual(Object.keys(legacy.holders[0]), ['address', 'balance']);
  const trades = (await httpJson(`${n.url}/tokens/${contract}/trades?limit=10`)).body;
  t.is(trades.total, 5);
  t.deepEqual(
    trades.transfers.map((x: any) => [x.kind, x.amount]),
    [
      ['burn', 40_000],
      ['mint', 500_000],
      ['transfer', 40_000],
      ['transfer', 250_000],
      ['deploy', 1_000_000],
    ],
  );
  const page = (await httpJson(`${n.url}/tokens/${contract}/transfers?page=1&limit=2`)).body;
  t.deepEqual(
    page.transfers.map((x: any) => x.kind),
    ['transfer', 'transfer'],
  );
  const held = (await httpJson(`${n.url}/accounts/${carol.address}/tokens`)).body;
  t.like(held.tokens[0], { standard: 'SRC-20', contract, symbol: 'GLD', decimals: 2, balance: '500000' });

  // Failures: each a 400 naming the problem, nothing in the pool, nonce unchanged.
  await expectRefused(
    t,
    n,
    bob,
    op(bob, { Mint: { contract, to: bob.address, amount: 1 } }),
    `only the deployer ${alice.address} may mint ${contract}`,
  );
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Mint: { contract, to: bob.address, amount: 40_001 } }),
    'mint exceeds max_supply: supply 1460000 + 40001 > 1500000',
  );
  await expectRefused(
    t,
    n,
    bob,
    op(bob, { Transfer: { contract, to: alice.address, amount: 250_001 } }),
    `insufficient token balance: ${bob.address} holds 250000, 250001 needed`,
  );
  await expectRefused(
    t,
    n,
    carol,
    op(carol, { Burn: { contract, amount: 500_001 } }),
    `insufficient token balance: ${carol.address} holds 500000, 500001 needed`,
    `/tokens/${contract}/burn`,
  );
  await expectRefused(
    t,
    n,
    bob,
    op(bob, { TransferFrom: { contract, from: alice.address, to: bob.address, amount: 60_001 } }),
    `insufficient allowance: ${alice.address} approved 60000 to ${bob.address}, 60001 needed`,
  );
  await expectRefused(
    t,
    n,
    carol,
    op(carol, { TransferFrom: { contract, from: alice.address, to: carol.address, amount: 1 } }),
    /insufficient allowance: .* approved 0 to/,
  );
  const unknown = `SRC20_${'ab'.repeat(20)}`;
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Transfer: { contract: unknown, to: bob.address, amount: 1 } }),
    `unknown token contract ${unknown}`,
    `/tokens/${unknown}/transfer`,
  );
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Transfer: { contract, to: bob.address, amount: 1 } }),
    'contract in data does not match URL',
    `/tokens/${unknown}/transfer`,
  );
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Burn: { contract, amount: 1 } }),
    'expected Deploy operation in tx.data',
    '/tokens/deploy',
  );
  await expectRefused(
    t,
    n,
    alice,
    op(alice, { Transfer: { contract, to: bob.address, amount: 1, memo: 'x' } }),
    /unknown field memo/,
  );
  t.is((await httpJson(`${n.url}/tokens/${unknown}`)).status, 404);
  t.is(await bal(bob.address), 250_000, 'balances unchanged by the refusals');

  // Daily aggregates are written with each block: today's transactions and first-time addresses.
  const today = (await httpJson(`${n.url}/stats/daily`)).body.days[0];
  t.true(today.tx_count >= 6, JSON.stringify(today));
  t.true(today.new_addresses >= 4, 'alice, bob, carol and the operation address');

  // JSON-RPC: native_sendTransaction takes the same operations; refusals are -32603 with the reason.
  const rpc = async (method: string, params: unknown[]) =>
    (await post(n, '/rpc', { jsonrpc: '2.0', id: 1, method, params })).body;
  const viaRpc = op(bob, { Transfer: { contract, to: carol.address, amount: 1_000 } });
  t.is((await rpc('native_sendTransaction', [viaRpc])).result.txid, viaRpc.txid);
  await confirmed(n, viaRpc.txid);
  const bad = await rpc('native_sendTransaction', [op(bob, { Transfer: { contract, to: carol.address, amount: 10 ** 9 } })]);
  refused(bob);
  t.is(bad.error.code, -32603);
  t.regex(bad.error.message, /insufficient token balance/);

  // native_traceTransaction: the spec's SRC20Transfer and SRC20Deploy shapes.
  const traced = await rpc('native_traceTransaction', [`0x${viaRpc.txid}`]);
  const trace = traced.result;
  if (!trace) t.log(traced);
  t.like(trace, {
    op: 'SRC20Transfer',
    contract,
    from: bob.address,
    to: carol.address,
    amount: '1000',
    pre_balances: { [bob.address]: '250000', [carol.address]: '500000' },
    post_balances: { [bob.address]: '249000', [carol.address]: '501000' },
    token: { symbol: 'GLD', decimals: 2, total_supply_before: '1460000', total_supply_after: '1460000' },
    status: 1,
  });
  t.deepEqual(trace.events, [{ type: 'Transfer', from: bob.address, to: carol.address, amount: '1000' }]);
  const dtrace = (await rpc('native_traceTransaction', [`0x${deploy.txid}`])).result;
  t.like(dtrace, {
    op: 'SRC20Deploy',
    contract,
    deployer: alice.address,
    token: { name: 'Gold', symbol: 'GLD', decimals: 2, initial_supply: '1000000', max_supply: '1500000' },
    genesis_holder: alice.address,
  });
});
