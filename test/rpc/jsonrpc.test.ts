import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction, BASE_PER_COIN, WEI_PER_BASE } from '../../ts/ledger/index.js';
import { parseJsonExact } from '../../ts/util/index.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
const bob = keyPairFromMnemonic(DEV_MNEMONIC, 4);
/** Receives the transfer of the send test, so other tests' reads of bob stay exact while tests run concurrently. */
const dave = keyPairFromMnemonic(DEV_MNEMONIC, 5);

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const rpcRaw = async (body: string) => {
  const r = await fetch(`${n.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await r.text();
  return { status: r.status, text, json: text ? (parseJsonExact(text) as any) : null };
};
const rpc = async (method: string, params: unknown[] = [], id: unknown = 1) =>
  (await httpJson(`${n.url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', method, params, id } })).body;

test('framing: parse error, invalid request, empty batch, batch of 101, notifications, id types', async (t) => {
  const parse = await rpcRaw('{"jsonrpc":"2.0",');
  t.is(parse.json.error.code, -32700);
  t.is(parse.json.id, null);
  t.is((await rpcRaw('[]')).json.error.code, -32600);
  const big = await rpcRaw(
    JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', method: 'eth_chainId', id: i }))),
  );
  t.false(Array.isArray(big.json));
  t.is(big.json.error.code, -32600);
  t.is(big.json.id, null);
  t.regex(big.json.error.message, /max 100/);
  t.regex(big.json.error.message, /101/);
  const ok100 = await rpcRaw(
    JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', method: 'eth_chainId', id: i }))),
  );
  t.is(ok100.json.length, 100);
  t.deepEqual(
    ok100.json.map((r: { id: number }) => r.id),
    Array.from({ length: 100 }, (_, i) => i),
  );
  // Notifications get no entry; a batch of only notifications gets an empty body.
  const mixed = await rpcRaw(
    JSON.stringify([
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', method: 'eth_blockNumber', id: 'x' },
    ]),
  );
  t.is(mixed.json.length, 1);
  t.is(mixed.json[0].id, 'x');
  const onlyNotes = await rpcRaw(JSON.stringify({ jsonrpc: '2.0', method: 'eth_chainId' }));
  t.is(onlyNotes.status, 200);
  t.is(onlyNotes.text, '');
  for (const id of ['abc', 7, null, 0]) t.is((await rpc('eth_chainId', [], id)).id, id);
  t.is((await rpcRaw('{"jsonrpc":"2.0","method":"eth_chainId","id":{"a":1}}')).json.error.code, -32600);
  t.is((await rpcRaw('{"jsonrpc":"1.0","method":"eth_chainId","id":1}')).json.error.code, -32600);
  t.is((await rpcRaw('{"jsonrpc":"2.0","method":5,"id":1}')).json.error.code, -32600);
  t.is((await rpcRaw('5')).json.error.code, -32600);
  const batchWithJunk = await rpcRaw('[1, {"jsonrpc":"2.0","method":"eth_chainId","id":2}]');
  t.is(batchWithJunk.json[0].error.code, -32600);
  t.is(batchWithJunk.json[1].result, '0x1bd0');
  const unknown = await rpc('eth_nope');
  t.is(unknown.error.code, -32601);
  t.regex(unknown.error.message, /eth_nope/);
  const deep = await rpcRaw(`${'['.repeat(5000)}${']'.repeat(5000)}`);
  t.true(deep.status < 500);
});

test('eth_, net_ and web3_ methods answer with the spec shapes', async (t) => {
  t.is((await rpc('eth_chainId')).result, '0x1bd0');
  t.regex((await rpc('eth_blockNumber')).result, /^0x[0-9a-f]+$/);
  t.is((await rpc('eth_gasPrice')).result, '0x3b9aca00');
  t.is((await rpc('eth_syncing')).result, false);
  // The dev chain lists the accounts it signs for (elsewhere the spec's []: test/rpc/dev-chain.test.ts).
  t.deepEqual(
    (await rpc('eth_accounts')).result,
    Array.from({ length: 10 }, (_, i) => keyPairFromMnemonic(DEV_MNEMONIC, i).address),
  );
  t.is((await rpc('net_version')).result, '7120');
  t.is((await rpc('net_listening')).result, true);
  t.is(
    (await rpc('web3_clientVersion')).result,
    `native-node/v0.1.0/node-v${process.versions.node}/${process.platform}-${process.arch}`,
  );
  const bal = await rpc('eth_getBalance', [bob.address, 'latest']);
  t.is(BigInt(bal.result), 10_000n * BASE_PER_COIN * WEI_PER_BASE);
  t.is((await rpc('native_getBalance', [bob.address])).result, bal.result);
  t.is((await rpc('eth_getTransactionCount', [bob.address, 'latest'])).result, '0x0');
  const genesis = (await rpc('eth_getBlockByNumber', ['earliest', false])).result;
  t.is(genesis.number, '0x0');
  for (const f of [
    'hash',
    'parentHash',
    'timestamp',
    'gasLimit',
    'gasUsed',
    'baseFeePerGas',
    'logsBloom',
    'miner',
    'transactions',
    'stateRoot',
  ]) {
    t.true(f in genesis, f);
  }
  t.is((await rpc('eth_getBlockByHash', [genesis.hash, true])).result.number, '0x0');
  t.is((await rpc('eth_getBlockByNumber', ['0xffffff', false])).result, null);
  for (const tag of ['latest', 'pending', 'safe', 'finalized'])
    t.truthy((await rpc('eth_getBlockByNumber', [tag, false])).result);
  const fh = (await rpc('eth_feeHistory', ['0x3', 'latest', [10, 50]])).result;
  t.is(fh.baseFeePerGas.length, fh.gasUsedRatio.length + 1);
  t.is(fh.reward[0].length, 2);
  t.is((await rpc('eth_maxPriorityFeePerGas')).result, '0x3b9aca00');
  // EVM methods are live on the dev chain (EVM activation height 0): a call to an account without code returns 0x.
  t.is((await rpc('eth_call', [{ to: bob.address }, 'latest'])).result, '0x');
});

test('invalid params get -32602 with a clear message', async (t) => {
  const cases: [string, unknown[]][] = [
    ['eth_getBalance', ['0x1234', 'latest']],
    ['eth_getBalance', [bob.address.slice(0, 41), 'latest']],
    ['eth_getBalance', []],
    ['eth_getBalance', [bob.address, 'latest', 'extra']],
    ['eth_getBalance', [bob.address, '0x00001']],
    ['eth_getBlockByNumber', ['banana', false]],
    ['eth_getBlockByNumber', ['0x1', 'yes']],
    ['eth_getBlockByHash', ['0x1234', false]],
    ['eth_getTransactionByHash', [12]],
    ['eth_feeHistory', ['0x01', 'latest', []]],
    ['eth_feeHistory', ['0x2', 'latest', [50, 10]]],
    ['native_sendTransaction', ['x']],
    ['native_sendTransaction', [{ amount: 1 }]],
    ['eth_getBlockByNumber', [`0x${'f'.repeat(80)}`, false]],
  ];
  for (const [method, params] of cases) {
    const r = await rpc(method, params);
    t.is(r.error?.code, -32602, `${method} ${JSON.stringify(params)} -> ${JSON.stringify(r)}`);
    t.true(r.error.message.length > 5);
  }
  const obj = await rpcRaw('{"jsonrpc":"2.0","method":"eth_getBalance","params":{"a":1},"id":1}');
  t.is(obj.json.error.code, -32602);
});

test('native_sendTransaction: accepted, visible through eth_getTransactionByHash, rejections are -32603', async (t) => {
  const tx = signTransaction(
    { from: alice.address, to: dave.address, amount: 5n, fee: 10_000n, nonce: 0n, chain_id: 7120 },
    alice,
  );
  const r = await rpc('native_sendTransaction', [tx]);
  t.deepEqual(r.result, { txid: tx.txid, status: 'pending_in_mempool' });
  t.is((await rpc('eth_getTransactionCount', [alice.address, 'pending'])).result, '0x1');
  const again = await rpc('native_sendTransaction', [
    signTransaction({ from: alice.address, to: dave.address, amount: 0n, fee: 10_000n, nonce: 1n, chain_id: 7120 }, alice),
  ]);
  t.is(again.error.code, -32603);
  t.is(again.error.message, 'Invalid transaction: amount must be > 0 (unless token/EVM operation)');
  const mined = await waitFor(async () => {
    const x = (await rpc('eth_getTransactionByHash', [`0x${tx.txid}`])).result;
    return x?.blockNumber ? x : null;
  });
  t.is(mined.from, alice.address);
  t.is(BigInt(mined.value), 5n * WEI_PER_BASE);
  t.true(['0x37c3', '0x37c4'].includes(mined.v), mined.v);
  const fin = (await rpc('native_getFinalizedHeight')).result;
  t.is(fin.blocks_behind_finality, 0);
  const vs = (await rpc('native_getValidatorSet')).result;
  t.is(vs.active_count, 1);
  t.is(vs.validators[0].status, 'active');
  const bft = (await rpc('native_getBftStatus')).result;
  t.truthy(bft.current_leader);
  t.deepEqual((await rpc('native_getDelegations', [bob.address])).result, { delegator: bob.address, delegations: [] });
  t.is((await rpc('native_getStakingRewards', [bob.address])).result.total_lifetime, '0x0');
});
