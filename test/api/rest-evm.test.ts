import test from 'ava';
import { EvmSender, callData, contract, deployData } from '../../bench/evm-fixtures.js';
import { TRANSFER_TOPIC } from '../../ts/services/index.js';
import { to0x } from '../../ts/util/index.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import { alice, assertMatchesSchema, bob, carol, routeFor } from './rest-fixture.js';

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(async () => {
  await n?.stop();
});

const rpc = async (method: string, params: unknown[] = []) => {
  const res = await httpJson(`${n.url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', method, params, id: 1 } });
  if (res.body?.error) throw new Error(`${method}: ${JSON.stringify(res.body.error)}`);
  return res.body?.result;
};
const get = (path: string) => httpJson(`${n.url}${path}`);

/** Send raw transactions in order and wait for every receipt. */
async function confirm(raws: Uint8Array[]): Promise<any[]> {
  const hashes: string[] = [];
  for (const raw of raws) hashes.push(await rpc('eth_sendRawTransaction', [to0x(raw)]));
  return Promise.all(hashes.map((h) => waitFor(() => rpc('eth_getTransactionReceipt', [h]), 30_000, `receipt of ${h}`)));
}

const E18 = 10n ** 18n;

test('code, is_contract and held tokens after deploying ERC-20-like tokens', async (t) => {
  const a = new EvmSender(alice);
  const b = new EvmSender(bob);
  const [d1, d2] = await confirm([
    a.raw(undefined, deployData('Token', ['Test Token', 'TTK', 1_000_000n * E18])),
    a.raw(undefined, deployData('Token', ['Other', 'OTH', 500n * E18])),
  ]);
  t.is(d1.status, '0x1');
  const [tk1, tk2] = [d1.contractAddress as string, d2.contractAddress as string];
  const transfers = await confirm([
    a.raw(tk1, callData('Token', 'transfer', [bob.address, 250n * E18])),
    a.raw(tk2, callData('Token', 'transfer', [bob.address, 7n])),
    a.raw(tk1, callData('Token', 'transfer', [carol.address, 1n])),
  ]);
  t.true(transfers.every((r) => r.status === '0x1'));
  // bob sends all of tk2 back: a zero balance is not "held".
  await confirm([b.raw(tk2, callData('Token', 'transfer', [alice.address, 7n]))]);

  // Code: the runtime bytecode in state, as eth_getCode answers; "0x" for an account without code.
  const code = await get(`/accounts/${tk1.toUpperCase().replace('0X', '0x')}/code`);
  t.is(code.status, 200);
  t.deepEqual(code.body, { address: tk1, code: contract('Token').deployedBytecode });
  t.is(code.body.code, await rpc('eth_getCode', [tk1, 'latest']));
  assertMatchesSchema(t, routeFor('GET', '/accounts/{address}/code'), code, 'code');
  t.deepEqual((await get(`/accounts/${alice.address}/code`)).body, { address: alice.address, code: '0x' });

  const info = await get(`/address/${tk1}/info`);
  t.like(info.body, { address: tk1, is_contract: true, nonce: 1 });
  assertMatchesSchema(t, routeFor('GET', '/address/{address}/info'), info, 'info');
  t.like((await get(`/address/${bob.address}/info`)).body, { is_contract: false });

  const tokens = await get(`/accounts/${bob.address}/tokens`);
  t.is(tokens.status, 200);
  assertMatchesSchema(t, routeFor('GET', '/accounts/{address}/tokens'), tokens, 'tokens');
  t.deepEqual(tokens.body, {
    address: bob.address,
    tokens: [
      { standard: 'ERC-20', contract: tk1, name: 'Test Token', symbol: 'TTK', decimals: 18, balance: (250n * E18).toString() },
    ],
  });
  // alice received both tokens through their mint Transfer (from the zero address), then tk2 back from bob.
  const mine = await get(`/accounts/${alice.address}/tokens`);
  t.deepEqual(
    mine.body.tokens,
    [
      {
        standard: 'ERC-20',
        contract: tk1,
        name: 'Test Token',
        symbol: 'TTK',
        decimals: 18,
        balance: (999_750n * E18 - 1n).toString(),
      },
      { standard: 'ERC-20', contract: tk2, name: 'Other', symbol: 'OTH', decimals: 18, balance: (500n * E18).toString() },
    ].sort((x, y) => (x.contract < y.contract ? -1 : 1)),
  );
  t.deepEqual(
    (await get(`/accounts/${carol.address}/tokens`)).body.tokens.map((x: any) => x.balance),
    ['1'],
  );
  t.deepEqual((await get(`/accounts/${tk1}/tokens`)).body, { address: tk1, tokens: [] });

  // The same Transfer logs through eth_getLogs, by address and by the recipient topic.
  const logs = await rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: tk1 }]);
  t.is(logs.length, 3);
  t.true(logs.every((l: any) => l.topics[0] === to0x(TRANSFER_TOPIC) && l.address === tk1));
  const toBob = `0x${'00'.repeat(12)}${bob.address.slice(2)}`;
  const bobs = await rpc('eth_getLogs', [{ fromBlock: '0x0', topics: [to0x(TRANSFER_TOPIC), null, toBob] }]);
  t.deepEqual(
    bobs.map((l: any) => l.address),
    [tk1, tk2],
  );
});

test('tokens of an address that never received any', async (t) => {
  const res = await get(`/accounts/0x${'5a'.repeat(20)}/tokens`);
  t.deepEqual(res.body, { address: `0x${'5a'.repeat(20)}`, tokens: [] });
  t.is((await get('/accounts/0x12/tokens')).status, 400);
});
