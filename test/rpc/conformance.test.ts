/**
 * JSON-RPC behaviour that Ethereum clients and geth's conformance fixtures rely on: each case here was found
 * differing from geth (issue "The first hour of a new user", part 3) and is pinned against regressions.
 */
import test from 'ava';
import { ethers } from 'ethers';
import { CHAIN_ID, devKey, ethersProvider, ethersWallet, rpc, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

/**
 * Init code that stores 0x2a in slot 1, emits one LOG0 and one LOG1 (topic 0x..01), and deploys no code:
 * PUSH1 2a PUSH1 01 SSTORE, PUSH1 0 PUSH1 0 LOG0, PUSH1 01 PUSH1 0 PUSH1 0 LOG1, STOP.
 */
const INIT_STORE_AND_LOG = '0x602a60015560006000a0600160006000a100';
const TOPIC_ONE = ethers.zeroPadValue('0x01', 32);

/** Deploy INIT_STORE_AND_LOG from dev account `i`; returns the receipt. */
async function deployStoreAndLog(i: number): Promise<any> {
  const provider = ethersProvider(n.url);
  try {
    const w = ethersWallet(n.url, i, provider);
    const nonce = Number(await rpcOk(n.url, 'eth_getTransactionCount', [w.address, 'pending']));
    const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, INIT_STORE_AND_LOG, nonce)]);
    return await waitReceipt(n.url, hash);
  } finally {
    provider.destroy();
  }
}

test('eth_getLogs: the 10,000-block cap is checked on the requested numbers first (-32005 on a young chain)', async (t) => {
  const r = await rpc(n.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x2711' }]);
  t.is(r.error?.code, -32005);
  t.regex(r.error!.message, /more than 10000/);
  // Within the cap but past the head: still geth's "beyond head".
  const beyond = await rpc(n.url, 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x2000' }]);
  t.deepEqual(beyond.error, { code: -32602, message: 'block range extends beyond current head block' });
});

test('eth_getStorageAt: the slot is DATA (leading zeros, up to 32 bytes), as ethers and viem send it', async (t) => {
  const rc = await deployStoreAndLog(1);
  t.is(rc.status, '0x1');
  const at = rc.contractAddress;
  const word = ethers.zeroPadValue('0x2a', 32);
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [at, ethers.zeroPadValue('0x01', 32), 'latest']), word);
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [at, '0x1', 'latest']), word);
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [at, '0x01']), word);
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [at, '0x0']), ethers.ZeroHash);
  // Through the clients themselves.
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  t.is(await provider.getStorage(at, 1n), word);
  // geth's fixtures: a 33-byte key and a non-hex key are -32602 with these words.
  const long = `0x${'0'.repeat(65)}`;
  t.deepEqual((await rpc(n.url, 'eth_getStorageAt', [at, long, 'latest'])).error, {
    code: -32602,
    message: `storage key too long (want at most 32 bytes): "${long}"`,
  });
  t.deepEqual((await rpc(n.url, 'eth_getStorageAt', [at, '0xasdf', 'latest'])).error, {
    code: -32602,
    message: 'invalid hex in storage key: "0xasdf"',
  });
});

test('eth_getLogs: topics [null] matches only logs with at least one topic (LOG0 excluded, as geth and Hardhat)', async (t) => {
  const rc = await deployStoreAndLog(2);
  const block = rc.blockNumber;
  const addr = rc.contractAddress;
  const all = await rpcOk<any[]>(n.url, 'eth_getLogs', [{ fromBlock: block, toBlock: block, address: addr }]);
  t.deepEqual(
    all.map((l) => l.topics.length),
    [0, 1],
  );
  const oneOrMore = await rpcOk<any[]>(n.url, 'eth_getLogs', [
    { fromBlock: block, toBlock: block, address: addr, topics: [null] },
  ]);
  t.deepEqual(
    oneOrMore.map((l) => l.topics),
    [[TOPIC_ONE]],
  );
  const twoOrMore = await rpcOk<any[]>(n.url, 'eth_getLogs', [
    { fromBlock: block, toBlock: block, address: addr, topics: [null, null] },
  ]);
  t.deepEqual(twoOrMore, []);
  const exact = await rpcOk<any[]>(n.url, 'eth_getLogs', [
    { fromBlock: block, toBlock: block, address: addr, topics: [TOPIC_ONE] },
  ]);
  t.is(exact.length, 1);
});

test('"params": null is no params (JSON-RPC 2.0 and geth); a non-array is still -32602', async (t) => {
  const call = async (body: string) =>
    (await httpJson(`${n.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).body;
  t.deepEqual(await call('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":null}'), {
    jsonrpc: '2.0',
    id: 1,
    result: ethers.toQuantity(CHAIN_ID),
  });
  t.is((await call('{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":null}')).error.code, -32602);
  t.is((await call('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":"x"}')).error.code, -32602);
});

test('eth_estimateGas on --dev: 21000 for a plain transfer, the exact estimate with data (the 100000 floor is for mainnet and testnet)', async (t) => {
  const from = devKey(3).address;
  const to = devKey(4).address;
  t.is(await rpcOk(n.url, 'eth_estimateGas', [{ from, to, value: '0x1' }]), '0x5208');
  // 21000 + 16 for one non-zero data byte (test/rpc/dev-chain-parity.test.ts pins the floor on a testnet node).
  t.is(await rpcOk(n.url, 'eth_estimateGas', [{ from, to, data: '0x12' }]), ethers.toQuantity(21_016));
  const est = BigInt(await rpcOk(n.url, 'eth_estimateGas', [{ from, data: INIT_STORE_AND_LOG }]));
  t.true(est > 21_000n && est < 100_000n, String(est));
  t.is(await rpcOk(n.url, 'eth_call', [{ from, data: INIT_STORE_AND_LOG, gas: ethers.toQuantity(est) }, 'latest']), '0x');
  const loop = '0x60005b600a8110156014576001018080556002565b00';
  const big = BigInt(await rpcOk(n.url, 'eth_estimateGas', [{ from, data: loop }]));
  t.true(big > 100_000n, String(big));
  // A caller's gas cap above the estimate does not change it.
  t.is(await rpcOk(n.url, 'eth_estimateGas', [{ from, to, data: '0x12', gas: '0x7530' }]), ethers.toQuantity(21_016));
});

test('eth_estimateGas is the exact lowest limit where the call succeeds, also past the used gas (a CALL with value)', async (t) => {
  const from = devKey(5).address;
  // Init code: six fresh SSTOREs (above the 100000 floor), then a CALL moving 1 wei on to 0xdead with all gas:
  // the 2300 stipend and the 63/64 rule make the lowest working limit higher than the gas the run uses.
  const stores = [1, 2, 3, 4, 5, 6].map((i) => `600160${i.toString(16).padStart(2, '0')}55`).join('');
  const data = `0x${stores}6000600060006000600161dead5af15000`;
  const call = { from, data, value: '0x1' };
  const est = BigInt(await rpcOk(n.url, 'eth_estimateGas', [call]));
  t.true(est > 100_000n, String(est));
  t.is(await rpcOk(n.url, 'eth_call', [{ ...call, gas: ethers.toQuantity(est) }, 'latest']), '0x');
  const below = await rpc(n.url, 'eth_call', [{ ...call, gas: ethers.toQuantity(est - 1n) }, 'latest']);
  t.is(below.error?.code, -32000, JSON.stringify(below));
});

test('/chain/performance: avg_block_time_ms is a number from the first block on', async (t) => {
  const fresh = await startTestNode({ blockTimeMs: 600_000 });
  t.teardown(() => fresh.stop());
  const perf = (await httpJson(`${fresh.url}/chain/performance`)).body;
  t.is(typeof perf.avg_block_time_ms, 'number');
  t.true(perf.avg_block_time_ms >= 0);
});

test('eth_call / eth_estimateGas failing inside the EVM answer the reason in geth words (initcode over 48 KiB)', async (t) => {
  const initcode = `0x${'00'.repeat(49_153)}`;
  const from = devKey(3).address;
  for (const method of ['eth_call', 'eth_estimateGas']) {
    const r = await rpc(n.url, method, [{ from, data: initcode }]);
    t.is(r.error?.code, -32000, method);
    t.is(r.error?.message, 'max initcode size exceeded: code size 49153 limit 49152', method);
  }
  // A value transfer the sender cannot pay for.
  const poor = ethers.Wallet.createRandom().address;
  const r = await rpc(n.url, 'eth_call', [{ from: poor, to: from, value: '0x1' }]);
  t.is(r.error?.code, -32000);
  t.regex(r.error!.message, /^insufficient funds for gas \* price \+ value/);
});

test('sweep: quantities, missing and extra params, unknown hashes and future blocks answer as geth does', async (t) => {
  const err = async (method: string, params: unknown[]) => (await rpc(n.url, method, params)).error;
  const bad = (message: string) => ({ code: -32602, message });
  t.deepEqual(await err('eth_getBlockByNumber', ['0x01', false]), bad('invalid argument 0: hex number with leading zero digits'));
  t.deepEqual(await err('eth_getBlockByNumber', ['1', false]), bad('invalid argument 0: hex string without 0x prefix'));
  t.deepEqual(await err('eth_getBlockByNumber', ['0x', false]), bad('invalid argument 0: hex string "0x"'));
  t.deepEqual(await err('eth_getBlockByNumber', ['0xzz', false]), bad('invalid argument 0: invalid hex string'));
  t.deepEqual(
    await err('eth_getBlockByNumber', [`0x1${'0'.repeat(16)}`, false]),
    bad('invalid argument 0: hex number > 64 bits'),
  );
  t.deepEqual(await err('eth_getBalance', []), bad('missing value for required argument 0'));
  t.deepEqual(await err('eth_blockNumber', [1]), bad('too many arguments, want at most 0'));
  // geth's fixtures: the zero hash and unknown hashes are null, not errors.
  t.is(await rpcOk(n.url, 'eth_getBlockByHash', [ethers.ZeroHash, true]), null);
  t.is(await rpcOk(n.url, 'eth_getBlockReceipts', [ethers.ZeroHash]), null);
  t.is(await rpcOk(n.url, 'eth_getTransactionByHash', [ethers.ZeroHash]), null);
  t.is(await rpcOk(n.url, 'eth_getTransactionReceipt', [ethers.ZeroHash]), null);
  t.is(await rpcOk(n.url, 'eth_getBlockReceipts', ['0xffffff']), null);
  t.deepEqual(await rpcOk(n.url, 'eth_getBlockReceipts', ['earliest']), []);
  t.deepEqual(await err('eth_getBalance', [devKey(3).address, '0xffffff']), { code: -32000, message: 'header not found' });
  t.is(await rpcOk(n.url, 'net_peerCount'), '0x0');
});

test('sweep: eth_feeHistory counts as geth (0 is empty, above 1024 capped, decimal accepted, beyond head refused)', async (t) => {
  t.deepEqual(await rpcOk(n.url, 'eth_feeHistory', ['0x0', 'latest', []]), {
    oldestBlock: '0x0',
    baseFeePerGas: [],
    gasUsedRatio: [],
  });
  const head = Number(await rpcOk(n.url, 'eth_blockNumber'));
  const all = await rpcOk(n.url, 'eth_feeHistory', ['0x10000', ethers.toQuantity(head), []]);
  t.is(all.gasUsedRatio.length, Math.min(head + 1, 1024));
  const two = await rpcOk(n.url, 'eth_feeHistory', ['2', ethers.toQuantity(head), [50]]);
  t.is(two.gasUsedRatio.length, Math.min(head + 1, 2));
  t.is(two.reward.length, two.gasUsedRatio.length);
  const beyond = (await rpc(n.url, 'eth_feeHistory', ['0x1', ethers.toQuantity(head + 1000), []])).error;
  t.is(beyond?.code, -32000);
  t.regex(beyond!.message, new RegExp(`^request beyond head block: requested ${head + 1000}, head \\d+$`));
});

test('sweep: block-indexed methods (transaction counts, transactions by position, uncles) and exact big ids', async (t) => {
  const rc = await deployStoreAndLog(5);
  const block = await rpcOk(n.url, 'eth_getBlockByNumber', [rc.blockNumber, false]);
  const count = await rpcOk(n.url, 'eth_getBlockTransactionCountByNumber', [rc.blockNumber]);
  t.is(count, ethers.toQuantity(block.transactions.length));
  t.is(await rpcOk(n.url, 'eth_getBlockTransactionCountByHash', [block.hash]), count);
  t.is(await rpcOk(n.url, 'eth_getBlockTransactionCountByNumber', ['earliest']), '0x0');
  t.is(await rpcOk(n.url, 'eth_getBlockTransactionCountByHash', [ethers.ZeroHash]), null);
  t.is(await rpcOk(n.url, 'eth_getBlockTransactionCountByNumber', ['0xffffff']), null);
  const byNumber = await rpcOk(n.url, 'eth_getTransactionByBlockNumberAndIndex', [rc.blockNumber, rc.transactionIndex]);
  t.is(byNumber.hash, rc.transactionHash);
  t.deepEqual(await rpcOk(n.url, 'eth_getTransactionByBlockHashAndIndex', [block.hash, rc.transactionIndex]), byNumber);
  t.deepEqual(byNumber, await rpcOk(n.url, 'eth_getTransactionByHash', [rc.transactionHash]));
  t.is(await rpcOk(n.url, 'eth_getTransactionByBlockNumberAndIndex', [rc.blockNumber, '0x400']), null);
  t.is(await rpcOk(n.url, 'eth_getUncleCountByBlockNumber', [rc.blockNumber]), '0x0');
  t.is(await rpcOk(n.url, 'eth_getUncleCountByBlockHash', [block.hash]), '0x0');
  t.is(await rpcOk(n.url, 'eth_getUncleByBlockNumberAndIndex', [rc.blockNumber, '0x0']), null);
  // An id beyond 2^53 comes back digit for digit.
  const r = await fetch(`${n.url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":123456789012345678901,"method":"eth_chainId"}',
  });
  t.regex(await r.text(), /"id":123456789012345678901[,}]/);
});
