import test from 'ava';
import { request } from 'node:http';
import { ethers } from 'ethers';
import { type TracePool, TraceOutputTooLargeError } from '../../ts/execution/index.js';
import { tokenContractAddress } from '../../ts/modules/index.js';
import { signTransaction, ZERO_ADDRESS } from '../../ts/ledger/index.js';
import { parseTraceOptions, parseCallArgs, rpcCodeOf } from '../../ts/rpc/index.js';
import { traceBlock, traceCall, traceNativeTransaction, traceTransaction } from '../../ts/services/index.js';
import { NodeError, parseJsonExact, stringifyExact } from '../../ts/util/index.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, ethersWallet, rpc, rpcOk, sendNative, signCall, waitReceipt } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { scenario, tracerIface } from '../helpers/trace.js';
import { waitFor } from '../helpers/util.js';

/** The same trace in-process (services without a node run traces on the calling thread), as JSON. */
async function inProcess(run: () => Promise<unknown>): Promise<{ result?: unknown; error?: string }> {
  try {
    return { result: parseJsonExact(stringifyExact(await run())) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The node's answer (the trace pool's workers) in the same shape. */
async function viaNode(url: string, method: string, params: unknown[]): Promise<{ result?: unknown; error?: string }> {
  const r = await rpc(url, method, params);
  return r.error ? { error: r.error.message } : { result: r.result };
}

const tracerOf = (n: TestNode) => n.node.ctx.evmTraces as TracePool;

/** A native transaction posted to the node (an SRC-20 operation when `data` is given). */
async function postNative(n: TestNode, key: ReturnType<typeof devKey>, nonce: bigint, data?: unknown, fee = 10_000n) {
  const tx = signTransaction(
    { from: key.address, to: ZERO_ADDRESS, amount: 0n, fee, nonce, data: data ? JSON.stringify(data) : '', chain_id: 7120 },
    key,
  );
  const r = await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: tx } });
  if (r.status !== 200) throw new Error(`POST /transactions: ${r.status} ${r.text}`);
  return tx.txid;
}

/** Deploy Tracer (dev account 1, nonce 0) and run its loop(`iterations`): the two transaction hashes, once mined. */
async function loopFixture(n: TestNode, iterations: bigint): Promise<{ deployHash: string; loopHash: string }> {
  const w = ethersWallet(n.url, 1);
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  const raws = [
    await signCall(w, null, compiled('Tracer').bytecode, 0, 1_000_000n),
    await signCall(w, tracer, tracerIface.encodeFunctionData('loop', [iterations]), 1, 10_000_000n),
  ];
  for (const raw of raws) await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  const loopHash = ethers.keccak256(raws[1]);
  const receipt = await waitReceipt(n.url, loopHash, 60_000);
  if (receipt.status !== '0x1') throw new Error('the loop failed');
  return { deployHash: ethers.keccak256(raws[0]), loopHash };
}

test('the trace workers answer exactly what the in-process run answers: every tracer, a block mixing native and EVM transactions, debug_traceCall, native traces', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  // Everything in one block: each transaction is traced after re-applying the ones before it in the worker,
  // native operations (read by message, re-run when they missed a key) and EVM transactions alike.
  await rpcOk(n.url, 'evm_setIntervalMining', [0]);
  await rpcOk(n.url, 'evm_setAutomine', [false]);
  const nativeIds = [
    await sendNative(n.url, devKey(3), devKey(4).address, 123_000n, 0n),
    await postNative(
      n,
      devKey(5),
      0n,
      { Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1000, max_supply: 2000 } },
      100_000n,
    ),
  ];
  const txs = await scenario(n.url);
  for (const tx of txs.slice(0, 4)) await rpcOk(n.url, 'eth_sendRawTransaction', [tx.raw]);
  const gold = tokenContractAddress(devKey(5).address, 0n);
  nativeIds.push(await postNative(n, devKey(5), 1n, { Transfer: { contract: gold, to: devKey(6).address, amount: 250 } }));
  for (const tx of txs.slice(4)) await rpcOk(n.url, 'eth_sendRawTransaction', [tx.raw]);
  await waitFor(
    async () => {
      await rpcOk(n.url, 'evm_mine');
      return (await httpJson(`${n.url}/mempool`)).body.size === 0;
    },
    30_000,
    'every transaction mined',
  );
  const receipts = await Promise.all(txs.map((tx) => waitReceipt(n.url, tx.hash)));
  const local = { chain: n.node.ctx.chain };

  const optionSets = [
    {},
    { disableMemory: true, disableStack: true, enableReturnData: true },
    { tracer: 'callTracer', tracerConfig: { withLog: true } },
    { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } },
    { tracer: 'prestateTracer' },
    { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
  ];
  for (const tx of txs) {
    for (const options of optionSets) {
      const worker = await viaNode(n.url, 'debug_traceTransaction', [tx.hash, options]);
      const mine = await inProcess(() => traceTransaction(local, tx.hash.slice(2), parseTraceOptions(options)));
      t.deepEqual(worker, mine, `${tx.name} ${JSON.stringify(options)}`);
      t.truthy(worker.result, `${tx.name} ${JSON.stringify(options)}: ${worker.error}`);
    }
  }
  const heights = [...new Set(receipts.map((r) => Number(r.blockNumber)))];
  for (const height of heights) {
    const block = await n.node.ctx.chain.blocks.getBlock(height);
    if (!block) throw new Error(`block ${height}`);
    for (const options of [{ tracer: 'callTracer' }, { tracer: 'prestateTracer' }, { disableMemory: true }]) {
      const worker = await viaNode(n.url, 'debug_traceBlockByNumber', [`0x${height.toString(16)}`, options]);
      t.deepEqual(worker, await inProcess(() => traceBlock(local, block, parseTraceOptions(options))), `block ${height}`);
    }
  }
  for (const id of nativeIds) {
    const worker = await viaNode(n.url, 'native_traceTransaction', [`0x${id}`]);
    t.truthy(worker.result, worker.error);
    t.deepEqual(worker, await inProcess(() => traceNativeTransaction(local, id)), `native ${id}`);
  }
  const tracer = ethers.getCreateAddress({ from: devKey(1).address, nonce: 0 });
  const call = { from: devKey(2).address, to: tracer, data: tracerIface.encodeFunctionData('nested', [9n]) };
  for (const options of [{}, { tracer: 'callTracer' }, { tracer: 'prestateTracer' }]) {
    const worker = await viaNode(n.url, 'debug_traceCall', [call, 'latest', options]);
    const mine = await inProcess(() => traceCall(local, parseCallArgs(call), parseTraceOptions(options)));
    t.deepEqual(worker, mine, `debug_traceCall ${JSON.stringify(options)}`);
  }
  t.true(tracerOf(n).threads.length > 0, 'the node traced in its worker threads');
});

test('a long trace runs in a worker: the node answers and makes blocks meanwhile; a queued trace times out; the pool serves on', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const { deployHash, loopHash } = await loopFixture(n, 10_000n);

  // ~400,000 steps through the call tracer: seconds of work, none of it on the event loop.
  let done = false;
  const heavy = viaNode(n.url, 'debug_traceTransaction', [loopHash, { tracer: 'callTracer', timeout: '30s' }]).finally(() => {
    done = true;
  });
  // Asked while the heavy one holds the worker (or runs next to it): its 200 ms pass first.
  const queued = await viaNode(n.url, 'debug_traceTransaction', [loopHash, { tracer: 'callTracer', timeout: '200ms' }]);
  t.deepEqual(queued, { error: 'trace timeout' });
  const heights: number[] = [];
  while (!done) {
    const h = Number(await rpcOk(n.url, 'eth_blockNumber'));
    if (!done) heights.push(h);
  }
  const answer = await heavy;
  t.is((answer.result as { type?: string } | undefined)?.type, 'CALL', JSON.stringify(answer).slice(0, 200));
  t.true(heights.length >= 3, `eth_blockNumber answered ${heights.length} times while the trace ran`);
  t.true(heights[heights.length - 1] > heights[0], 'blocks were made while the trace ran');

  // A running trace past its timeout: stopped in the worker, answered as the spec says; the pool serves on.
  t.deepEqual(await viaNode(n.url, 'debug_traceTransaction', [loopHash, { tracer: 'callTracer', timeout: '500ms' }]), {
    error: 'trace timeout',
  });
  const small = await viaNode(n.url, 'debug_traceTransaction', [deployHash, { tracer: 'callTracer' }]);
  t.is((small.result as { type?: string }).type, 'CREATE');
});

test('output cap in the worker: debug_traceCall struct logs built in memory (a batch) are refused past 50 MB', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 1);
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  await waitReceipt(
    n.url,
    await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, compiled('Tracer').bytecode, 0, 1_000_000n)]),
  );
  const call = { from: w.address, to: tracer, data: tracerIface.encodeFunctionData('loop', [40_000n]), gas: '0x989680' };
  const r = await httpJson(`${n.url}/rpc`, {
    method: 'POST',
    json: [{ jsonrpc: '2.0', id: 1, method: 'debug_traceCall', params: [call, 'latest', { timeout: '30s' }] }],
  });
  t.deepEqual(r.body[0].error, { code: -32000, message: new TraceOutputTooLargeError().message });
  t.is(typeof (await rpcOk(n.url, 'eth_blockNumber')), 'string');
});

test('rolled back: a transaction of a reverted block is "transaction not found"; a trace whose state the chain rolled back under fails with the stale-view error', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const chain = n.node.ctx.chain;
  const w = ethersWallet(n.url, 1);
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  await waitReceipt(
    n.url,
    await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, compiled('Tracer').bytecode, 0, 1_000_000n)]),
  );
  const snap = await rpcOk(n.url, 'evm_snapshot');
  const raw = await signCall(w, tracer, tracerIface.encodeFunctionData('nested', [7n]), 1, 600_000n);
  const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  const receipt = await waitReceipt(n.url, hash);
  t.is((await viaNode(n.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }])).result !== undefined, true);

  // A view of the state after the transaction's block, then the chain rolls back below it.
  const height = Number(receipt.blockNumber);
  await waitFor(async () => chain.height > height, 15_000, 'a block after the transaction');
  const view = await chain.stateAt(height);
  t.true(await rpcOk(n.url, 'evm_revert', [snap]));
  t.deepEqual(await viaNode(n.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }]), {
    error: 'transaction not found',
  });
  const env = chain.blockEnv(height + 1, chain.head.validator, chain.head.timestamp + 1);
  const err = await t.throwsAsync(
    tracerOf(n).run({
      job: {
        kind: 'call',
        args: parseCallArgs({ from: w.address, to: tracer, data: tracerIface.encodeFunctionData('nested', [3n]) }),
      },
      env,
      state: view,
      prefix: [],
      opts: parseTraceOptions({ tracer: 'callTracer' }),
    }),
  );
  view.release();
  t.is(err?.message, 'the chain was rolled back below this state view');
  t.true(err instanceof NodeError, 'a node error, mapped like one');
  t.is(rpcCodeOf(err as NodeError), -32000);
});

test('a streamed trace whose client goes away stops in its worker; the pool serves on', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const { deployHash, loopHash } = await loopFixture(n, 40_000n);
  // The struct logs start streaming (past the first 1 MB); the client reads one chunk and hangs up.
  const got = await new Promise<number>((resolve, reject) => {
    const req = request(`${n.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.once('data', (d: Buffer) => {
        req.destroy();
        resolve(d.length);
      });
      res.on('error', () => undefined);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'debug_traceTransaction', params: [loopHash, { timeout: '30s' }] }));
  });
  t.true(got > 0);
  await waitFor(async () => tracerOf(n).pending === 0, 30_000, 'the abandoned trace ended');
  const small = await viaNode(n.url, 'debug_traceTransaction', [deployHash, { tracer: 'callTracer' }]);
  t.is((small.result as { type?: string }).type, 'CREATE');
});
