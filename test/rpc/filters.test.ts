import test from 'ava';
import { ethers } from 'ethers';
import { FILTER_TIMEOUT_MS, FilterRegistry, MAX_FILTERS_PER_CLIENT } from '../../ts/events/index.js';
import { compiled } from '../helpers/contracts.js';
import { ethersProvider, ethersWallet, rpc, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const iface = new ethers.Interface(compiled('Box').abi);
const STORED = iface.getEvent('Stored')!.topicHash;

async function deployBox(w: ethers.Wallet, url: string): Promise<string> {
  const { abi, bytecode } = compiled('Box');
  const tx = await new ethers.ContractFactory(abi, bytecode, w).getDeployTransaction(0n);
  const rc = await waitReceipt(url, (await w.sendTransaction(tx)).hash);
  return rc.contractAddress;
}

test('block filter: every new block once, in height order, from installation on; uninstall ends it', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  // Read before installing: a block made between the two calls would otherwise be a false "from before".
  const start = Number(await rpcOk(n.url, 'eth_blockNumber'));
  const id = await rpcOk<string>(n.url, 'eth_newBlockFilter');
  t.regex(id, /^0x[0-9a-f]{32}$/);
  const seen: string[] = [];
  await waitFor(async () => {
    seen.push(...(await rpcOk<string[]>(n.url, 'eth_getFilterChanges', [id])));
    return seen.length >= 6;
  });
  const heights: number[] = [];
  for (const h of seen) heights.push(Number((await rpcOk(n.url, 'eth_getBlockByHash', [h, false])).number));
  // In order, no gaps, no repeats, nothing from before the filter existed.
  t.true(heights[0] > start);
  heights.forEach((h, i) => i > 0 && t.is(h, heights[i - 1] + 1));
  t.true(await rpcOk(n.url, 'eth_uninstallFilter', [id]));
  t.false(await rpcOk(n.url, 'eth_uninstallFilter', [id]));
  const gone = await rpc(n.url, 'eth_getFilterChanges', [id]);
  t.is(gone.error?.code, -32000);
  t.is(gone.error?.message, 'filter not found');
});

test('log filter: changes carry new matching logs once; eth_getFilterLogs runs the range; pending filter sees hashes', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 0, provider);
  const box = await deployBox(w, n.url);
  const stored = await rpcOk<string>(n.url, 'eth_newFilter', [{ address: box, topics: [STORED] }]);
  const other = await rpcOk<string>(n.url, 'eth_newFilter', [{ address: box, topics: [ethers.id('nothing')] }]);
  const all = await rpcOk<string>(n.url, 'eth_newFilter', [{ fromBlock: 'earliest', address: box }]);
  const pending = await rpcOk<string>(n.url, 'eth_newPendingTransactionFilter');
  const nonce = await provider.getTransactionCount(w.address, 'pending');
  const hashes: string[] = [];
  for (let i = 0; i < 3; i++) {
    const raw = await signCall(w, box, iface.encodeFunctionData('store', [BigInt(100 + i)]), nonce + i);
    hashes.push(await rpcOk<string>(n.url, 'eth_sendRawTransaction', [raw]));
  }
  for (const h of hashes) await waitReceipt(n.url, h);
  const logs = await rpcOk<any[]>(n.url, 'eth_getFilterChanges', [stored]);
  t.deepEqual(
    logs.map((l) => BigInt(l.topics[2])),
    [100n, 101n, 102n],
  );
  t.deepEqual(
    logs.map((l) => l.transactionHash),
    hashes,
  );
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [stored]), []);
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [other]), []);
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [pending]), hashes);
  // The whole range now (from earliest to the head), as eth_getLogs would answer it.
  const history = await rpcOk<any[]>(n.url, 'eth_getFilterLogs', [all]);
  t.deepEqual(history, await rpcOk(n.url, 'eth_getLogs', [{ fromBlock: 'earliest', address: box }]));
  t.is(history.length, 3);
  // A block filter has no logs to query.
  const blocks = await rpcOk<string>(n.url, 'eth_newBlockFilter');
  t.is((await rpc(n.url, 'eth_getFilterLogs', [blocks])).error?.message, 'filter not found');
  // Bad criteria are invalid params.
  t.is((await rpc(n.url, 'eth_newFilter', [{ fromBlock: '0x5', toBlock: '0x1' }])).error?.code, -32602);
  t.is((await rpc(n.url, 'eth_newFilter', [{ address: '0x12' }])).error?.code, -32602);
});

test('filters expire after 5 minutes unpolled; polling extends them; a client holds a bounded number', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const ctx = n.node.ctx;
  let clock = 1_000_000;
  const reg = new FilterRegistry(ctx.chain, ctx.events!, { now: () => clock, maxPerClient: 3 });
  t.teardown(() => reg.stop());
  const polled = reg.install('a', 'blocks');
  const idle = reg.install('a', 'blocks');
  clock += FILTER_TIMEOUT_MS - 1;
  await reg.changes(polled);
  clock += 2;
  t.is(reg.sweep(), 1);
  await t.throwsAsync(reg.changes(idle), { message: 'filter not found' });
  await reg.changes(polled);
  reg.install('a', 'pending');
  reg.install('a', 'logs', { addresses: [], topics: [], fromBlock: 'latest', toBlock: 'latest' });
  t.throws(() => reg.install('a', 'blocks'), { message: /too many filters/ });
  // Another client is not affected; an expired filter frees its slot.
  t.truthy(reg.install('b', 'blocks'));
  clock += FILTER_TIMEOUT_MS + 1;
  t.truthy(reg.install('a', 'blocks'));

  // Over JSON-RPC the client is the caller's address: the node's bound applies per address.
  const ids: string[] = [];
  const batch = Array.from({ length: MAX_FILTERS_PER_CLIENT }, (_, i) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'eth_newBlockFilter',
  }));
  for (let i = 0; i < batch.length; i += 100) {
    const r = await httpJson(`${n.url}/rpc`, { method: 'POST', json: batch.slice(i, i + 100) });
    ids.push(...(r.body as { result: string }[]).map((x) => x.result));
  }
  t.is(new Set(ids).size, MAX_FILTERS_PER_CLIENT);
  const refused = await rpc(n.url, 'eth_newBlockFilter');
  t.is(refused.error?.code, -32000);
  t.regex(refused.error?.message ?? '', /too many filters/);
  t.true(await rpcOk(n.url, 'eth_uninstallFilter', [ids[0]]));
  t.regex(await rpcOk(n.url, 'eth_newBlockFilter'), /^0x/);
});

test('txpool_status, txpool_content, txpool_inspect; rpc_modules; eth_createAccessList', async (t) => {
  // No blocks while the test looks at the pool (a long block time), so transactions stay pending.
  const n = await startTestNode({ blockTimeMs: 600_000 });
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 2, provider);
  const to = ethers.Wallet.createRandom().address;
  const raws = await Promise.all(
    [0, 1].map((nonce) =>
      w.signTransaction({
        type: 2,
        chainId: 7120n,
        to,
        value: 5n,
        nonce,
        gasLimit: 21_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1n,
      }),
    ),
  );
  for (const raw of raws) await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x2', queued: '0x0' });
  const content = await rpcOk(n.url, 'txpool_content');
  t.deepEqual(Object.keys(content.pending), [w.address]);
  t.deepEqual(Object.keys(content.pending[w.address]), ['0', '1']);
  t.is(content.pending[w.address]['1'].to, to.toLowerCase());
  t.is(content.pending[w.address]['1'].blockHash, null);
  t.deepEqual(content.queued, {});
  const inspect = await rpcOk(n.url, 'txpool_inspect');
  t.is(inspect.pending[w.address]['0'], `${to}: 5 wei + 21000 gas × 2000000000 wei`);
  const from = await rpcOk(n.url, 'txpool_contentFrom', [w.address]);
  t.deepEqual(Object.keys(from.pending), ['0', '1']);

  const modules = await rpcOk(n.url, 'rpc_modules');
  for (const m of ['eth', 'net', 'web3', 'txpool', 'debug', 'native', 'rpc']) t.is(modules[m], '1.0', m);

  // Tracer.nested creates a child with CREATE2, calls it (slot 0 written) and the sha256 precompile: the
  // list names the child and its slot, never the sender, the recipient or the precompile.
  const tracerAbi = compiled('Tracer').abi;
  const tracer = await (async () => {
    await n.node.consensus.produce();
    const dep = await new ethers.ContractFactory(tracerAbi, compiled('Tracer').bytecode, w).getDeployTransaction();
    const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, dep.data, 2, 3_000_000n)]);
    await n.node.consensus.produce();
    return (await rpcOk(n.url, 'eth_getTransactionReceipt', [hash])).contractAddress as string;
  })();
  const nested = new ethers.Interface(tracerAbi).encodeFunctionData('nested', [1n]);
  const list = await rpcOk(n.url, 'eth_createAccessList', [{ from: w.address, to: tracer, data: nested }]);
  t.is(list.accessList.length, 1, JSON.stringify(list));
  t.not(list.accessList[0].address, tracer.toLowerCase());
  t.true(list.accessList[0].storageKeys.includes(`0x${'00'.repeat(32)}`), JSON.stringify(list));
  t.regex(list.gasUsed, /^0x[0-9a-f]+$/);
  t.is(list.error, undefined);
  // The gas with the list is what eth_estimateGas finds for the same call carrying it.
  const withList = await rpcOk(n.url, 'eth_estimateGas', [
    { from: w.address, to: tracer, data: nested, accessList: list.accessList },
  ]);
  t.true(BigInt(withList) >= BigInt(list.gasUsed), `${withList} ${list.gasUsed}`);
  const box = await deployBoxAt(n, w);
  const reverted = await rpcOk(n.url, 'eth_createAccessList', [
    { from: w.address, to: box, data: iface.encodeFunctionData('fail') },
  ]);
  t.is(reverted.error, 'execution reverted: Box: nope');
});

async function deployBoxAt(n: Awaited<ReturnType<typeof startTestNode>>, w: ethers.Wallet): Promise<string> {
  const dep = await new ethers.ContractFactory(compiled('Box').abi, compiled('Box').bytecode, w).getDeployTransaction(7n);
  const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, dep.data, 3, 1_000_000n)]);
  await n.node.consensus.produce();
  return (await rpcOk(n.url, 'eth_getTransactionReceipt', [hash])).contractAddress as string;
}
