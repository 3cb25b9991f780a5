import test from 'ava';
import { join } from 'node:path';
import { writeGenesisFile } from '../../ts/chain/index.js';
import { randomKeyPair, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import { ethers } from 'ethers';
import { devKey, ethersWallet, rpc, rpcOk, sendNative, signCall, waitReceipt } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';
import { scenario, submitScenario, tracerIface } from '../helpers/trace.js';
import { tempDir, waitFor } from '../helpers/util.js';

const byName = (txs: { name: string; hash: string }[], name: string): string => txs.find((t) => t.name === name)!.hash;

test('callTracer: nested frames, CREATE2, revert reasons, SELFDESTRUCT, onlyTopCall and withLog', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const txs = await scenario(n.url);
  await submitScenario(n.url, txs);
  const tracer = ethers.getCreateAddress({ from: devKey(1).address, nonce: 0 }).toLowerCase();

  const nested = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'nested'), { tracer: 'callTracer' }]);
  const receipt = await rpcOk(n.url, 'eth_getTransactionReceipt', [byName(txs, 'nested')]);
  t.is(nested.type, 'CALL');
  t.is(nested.from, devKey(1).address);
  t.is(nested.to, tracer);
  t.is(nested.gas, '0x927c0');
  t.is(nested.gasUsed, receipt.gasUsed);
  t.deepEqual(
    nested.calls.map((c: any) => c.type),
    // fail() is `pure`: Solidity calls it with STATICCALL.
    ['CREATE2', 'CALL', 'STATICCALL', 'STATICCALL', 'STATICCALL'],
  );
  const [create2, set, fail, view, sha] = nested.calls;
  t.is(
    create2.to,
    ethers.getCreate2Address(tracer, ethers.zeroPadValue('0x07', 32), ethers.keccak256(create2.input)).toLowerCase(),
  );
  t.is(BigInt(set.output), 14n);
  t.is(fail.error, 'execution reverted');
  t.is(fail.revertReason, 'child says no');
  t.is(view.value, undefined);
  t.is(sha.to, '0x0000000000000000000000000000000000000002');
  t.is(sha.output, ethers.sha256(ethers.zeroPadValue('0x07', 32)));
  t.is(nested.logs, undefined);

  const withLog = await rpcOk(n.url, 'debug_traceTransaction', [
    byName(txs, 'nested'),
    { tracer: 'callTracer', tracerConfig: { withLog: true } },
  ]);
  t.is(withLog.calls[1].logs.length, 1);
  t.is(withLog.calls[1].logs[0].address, create2.to);
  t.is(withLog.logs.length, 1);
  t.is(withLog.logs[0].topics[0], tracerIface.getEvent('Done')!.topicHash);
  t.is(withLog.logs[0].position, '0x5');
  const top = await rpcOk(n.url, 'debug_traceTransaction', [
    byName(txs, 'nested'),
    { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } },
  ]);
  t.is(top.calls, undefined);
  t.is(top.gasUsed, nested.gasUsed);

  const destroy = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'destroy'), { tracer: 'callTracer' }]);
  t.deepEqual(
    destroy.calls.map((c: any) => c.type),
    ['CREATE', 'CALL'],
  );
  t.is(destroy.calls[0].value, '0x3039');
  t.like(destroy.calls[1].calls[0], { type: 'SELFDESTRUCT', from: destroy.calls[0].to, to: devKey(1).address, value: '0x3039' });

  const boom = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'boom'), { tracer: 'callTracer' }]);
  t.like(boom, { error: 'execution reverted', revertReason: 'tracer says no' });
  const oog = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'outOfGas'), { tracer: 'callTracer' }]);
  t.like(oog, { error: 'out of gas', gasUsed: '0xea60' });
  t.is(oog.output, undefined);
  const deploy = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'deploy'), { tracer: 'callTracer' }]);
  t.like(deploy, { type: 'CREATE', to: tracer });

  // debug_traceCall: the same call as eth_call, on the head state (the child exists by now: no CREATE2).
  const call = { from: devKey(1).address, to: tracer, data: tracerIface.encodeFunctionData('nested', [9n]), gas: '0x7a120' };
  const traced = await rpcOk(n.url, 'debug_traceCall', [call, 'latest', { tracer: 'callTracer' }]);
  t.deepEqual(
    traced.calls.map((c: any) => c.type),
    ['CALL', 'STATICCALL', 'STATICCALL', 'STATICCALL'],
  );
  t.is(traced.gas, '0x7a120');
  // estimateGas is the lowest limit at which the call succeeds: at least the gas it uses.
  t.true(BigInt(await rpcOk(n.url, 'eth_estimateGas', [call])) >= BigInt(traced.gasUsed));
  const logs = await rpcOk(n.url, 'debug_traceCall', [call, 'latest']);
  t.is(`0x${logs.returnValue}`, await rpcOk(n.url, 'eth_call', [call, 'latest']));
  t.is(logs.failed, false);
  t.is(logs.structLogs[0].op, 'PUSH1');
  // At genesis the contract does not exist yet: the call runs no code, as eth_call there.
  const atGenesis = await rpcOk(n.url, 'debug_traceCall', [call, '0x0']);
  t.deepEqual(atGenesis.structLogs, []);
  t.is(`0x${atGenesis.returnValue}`, await rpcOk(n.url, 'eth_call', [call, '0x0']));
});

test('prestateTracer: pre-state of every touched account; diffMode keeps what changed', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const txs = await scenario(n.url);
  await submitScenario(n.url, txs);
  const tracer = ethers.getCreateAddress({ from: devKey(1).address, nonce: 0 }).toLowerCase();
  const sender = devKey(1).address;

  const pre = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'refund'), { tracer: 'prestateTracer' }]);
  t.deepEqual(Object.keys(pre).sort(), [sender, tracer].sort());
  t.is(pre[sender].nonce, 3);
  t.regex(pre[sender].balance, /^0x[0-9a-f]+$/);
  t.is(pre[tracer].code, await rpcOk(n.url, 'eth_getCode', [tracer, 'latest']));
  t.deepEqual(pre[tracer].storage, {
    [ethers.zeroPadValue('0x00', 32)]: ethers.zeroPadValue('0x01', 32),
    [ethers.zeroPadValue('0x01', 32)]: ethers.zeroPadValue('0x02', 32),
  });

  const diff = await rpcOk(n.url, 'debug_traceTransaction', [
    byName(txs, 'refund'),
    { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
  ]);
  t.deepEqual(diff.pre[tracer].storage, pre[tracer].storage);
  t.deepEqual(diff.post[tracer], { storage: { [ethers.zeroPadValue('0x00', 32)]: ethers.zeroPadValue('0x05', 32) } });
  t.is(diff.post[sender].nonce, 4);
  t.true(BigInt(diff.post[sender].balance) < BigInt(diff.pre[sender].balance));

  // A contract created and destroyed in the same transaction exists in neither pre nor post.
  const destroyed = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'destroy'), { tracer: 'callTracer' }]);
  const child = destroyed.calls[0].to;
  const d = await rpcOk(n.url, 'debug_traceTransaction', [
    byName(txs, 'destroy'),
    { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
  ]);
  t.is(d.pre[child], undefined);
  t.is(d.post[child], undefined);
  // geth leaves out accounts that were empty before the transaction (the contract it created).
  const p = await rpcOk(n.url, 'debug_traceTransaction', [byName(txs, 'destroy'), { tracer: 'prestateTracer' }]);
  t.is(p[child], undefined);
});

test('errors: invalid params, transaction not found, wrong method for native and EVM transactions', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 2);
  const deploy = await w.signTransaction({
    type: 2,
    chainId: 7120n,
    to: null,
    data: '0x600a600c600039600a6000f3602a60005260206000f3',
    nonce: 0,
    gasLimit: 100_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const evmHash = await rpcOk(n.url, 'eth_sendRawTransaction', [deploy]);
  const nativeId = await sendNative(n.url, devKey(3), devKey(4).address, 123_000n, 0n);
  await waitReceipt(n.url, evmHash);
  await waitReceipt(n.url, `0x${nativeId}`);

  const invalid = async (method: string, params: unknown[]) => {
    const r = await rpc(n.url, method, params);
    t.is(r.error?.code, -32602, `${method} ${JSON.stringify(params)}`);
    t.is(r.error?.message, 'invalid params');
  };
  await invalid('debug_traceTransaction', ['0x1234']);
  await invalid('debug_traceTransaction', [evmHash, { tracer: 'fourByteTracer' }]);
  await invalid('debug_traceTransaction', [evmHash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: 'yes' } }]);
  await invalid('debug_traceTransaction', [evmHash, { tracer: 'callTracer', tracerConfig: { diffMode: true } }]);
  await invalid('debug_traceTransaction', [evmHash, { timeout: '10 seconds' }]);
  await invalid('debug_traceTransaction', [evmHash, { disableStack: 1 }]);
  await invalid('native_traceTransaction', [42]);

  const unknown = `0x${'ab'.repeat(32)}`;
  for (const method of ['debug_traceTransaction', 'native_traceTransaction']) {
    t.deepEqual((await rpc(n.url, method, [unknown])).error, { code: -32000, message: 'transaction not found' });
  }
  t.deepEqual((await rpc(n.url, 'debug_traceTransaction', [`0x${nativeId}`])).error, {
    code: -32000,
    message: 'tx is not an EVM transaction',
  });
  t.deepEqual((await rpc(n.url, 'native_traceTransaction', [evmHash])).error, {
    code: -32000,
    message: 'tx is an EVM transaction, use debug_traceTransaction',
  });

  // The native trace of the transfer: both accounts before and after, and the fee split.
  const nt = await rpcOk(n.url, 'native_traceTransaction', [`0x${nativeId}`]);
  const from = devKey(3).address;
  const to = devKey(4).address;
  t.like(nt, { op: 'NativeTransfer', from, to, amount_base: 123_000, amount_native: 0.00123, fee_base: 10_000 });
  t.is(nt.pre_state[from].nonce, 0);
  t.is(nt.post_state[from].nonce, 1);
  t.is(nt.pre_state[from].balance_base - nt.post_state[from].balance_base, 133_000);
  t.is(nt.post_state[to].balance_base - nt.pre_state[to].balance_base, 123_000);
  t.like(nt.fee_split, { burned_base: 5_000, validator_base: 5_000 });
  t.true(JSON.stringify(nt).length < 5_000);

  // An EVM transaction traced after its block: the struct logs of the deployment.
  const st = await rpcOk(n.url, 'debug_traceTransaction', [evmHash, { disableMemory: true }]);
  t.is(st.structLogs[0].op, 'PUSH1');
  t.is(st.structLogs[0].memory, undefined);
  t.is(st.returnValue, '602a60005260206000f3');
});

test('limits: trace timeout, output cap, and other requests served while a trace runs', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 1);
  const { bytecode } = (await import('../helpers/contracts.js')).compiled('Tracer');
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  const raws = [
    await signCall(w, null, bytecode, 0, 1_000_000n),
    await signCall(w, tracer, tracerIface.encodeFunctionData('loop', [40_000n]), 1, 10_000_000n),
  ];
  for (const raw of raws) await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  const loopHash = ethers.keccak256(raws[1]);
  t.is((await waitReceipt(n.url, loopHash, 60_000)).status, '0x1');

  // The struct logs of ~1.4 M steps pass the 50 MB cap while they are produced.
  // (The longest timeout: on a loaded machine the default 10 s could come first.)
  t.deepEqual((await rpc(n.url, 'debug_traceTransaction', [loopHash, { timeout: '30s' }])).error, {
    code: -32000,
    message: 'output too large',
  });

  // A call trace of the same loop with a short timeout: stops with "trace timeout"; meanwhile the node answers.
  let traceDone = false;
  const slow = rpc(n.url, 'debug_traceTransaction', [loopHash, { tracer: 'callTracer', timeout: '300ms' }]).finally(() => {
    traceDone = true;
  });
  const answered = await waitFor(async () => (await rpcOk(n.url, 'eth_blockNumber')) && { traceDone }, 10_000);
  t.false(answered.traceDone, 'eth_blockNumber was answered while the trace ran');
  t.deepEqual((await slow).error, { code: -32000, message: 'trace timeout' });
});

test('historical state: older blocks traced from the state history, also after a restart; older than --history refused', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let n = await startTestNode({ dataDir: tmp.dir });
  const w = ethersWallet(n.url, 1);
  const data = tracerIface.encodeFunctionData('refund');
  const { bytecode } = (await import('../helpers/contracts.js')).compiled('Tracer');
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 }).toLowerCase();
  const first = [await signCall(w, null, bytecode, 0, 1_000_000n), await signCall(w, tracer, data, 1, 100_000n)];
  for (const raw of first) await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  const hash = ethers.keccak256(first[1]);
  const receipt = await waitReceipt(n.url, hash);
  // Wait until the head is a few blocks past the transaction: its state has changed since.
  await waitFor(async () => Number(await rpcOk(n.url, 'eth_blockNumber')) >= Number(receipt.blockNumber) + 3, 15_000);
  const before = await rpcOk(n.url, 'debug_traceTransaction', [hash, { tracer: 'prestateTracer' }]);
  t.is(before[tracer].storage[ethers.zeroPadValue('0x00', 32)], ethers.zeroPadValue('0x01', 32));

  // debug_traceBlockByNumber gives the same result per transaction.
  const blockTrace = await rpcOk(n.url, 'debug_traceBlockByNumber', [receipt.blockNumber, { tracer: 'prestateTracer' }]);
  const entry = blockTrace.find((e: any) => e.txHash === hash);
  t.deepEqual(entry.result, before);
  const byHash = await rpcOk(n.url, 'debug_traceBlockByHash', [receipt.blockHash, { tracer: 'prestateTracer' }]);
  t.deepEqual(byHash, blockTrace);

  await n.stop();
  n = await startTestNode({ dataDir: tmp.dir });
  // The history is on disk: the same trace after a restart.
  t.deepEqual(await rpcOk(n.url, 'debug_traceTransaction', [hash, { tracer: 'prestateTracer' }]), before);
  // debug_traceCall at the transaction's block sees that block's state.
  const call = { from: w.address, to: tracer, data, gas: '0x186a0' };
  const atBlock = await rpcOk(n.url, 'debug_traceCall', [call, receipt.blockNumber, { tracer: 'prestateTracer' }]);
  t.truthy(atBlock[tracer]);
  await n.stop();
  // A node keeping only the last 2 blocks of history refuses older ones, naming the oldest it has.
  n = await startTestNode({ dataDir: tmp.dir, history: { kind: 'recent', blocks: 2 } });
  t.teardown(() => n.stop());
  // Pruning follows commits: wait for a few blocks made by this node.
  const restartedAt = Number(await rpcOk(n.url, 'eth_blockNumber'));
  await waitFor(async () => Number(await rpcOk(n.url, 'eth_blockNumber')) >= restartedAt + 3, 15_000);
  const r = await rpc(n.url, 'debug_traceTransaction', [hash]);
  t.is(r.error?.code, -32000);
  t.regex(r.error?.message ?? '', /^historical state is not available for block \d+: the oldest available block is \d+$/);
  // A transaction committed after the restart is traced.
  const again = await signCall(w, tracer, data, 2, 100_000n);
  const h2 = await rpcOk(n.url, 'eth_sendRawTransaction', [again]);
  await waitReceipt(n.url, h2);
  const st = await rpcOk(n.url, 'debug_traceTransaction', [h2, { tracer: 'callTracer' }]);
  t.is(st.to, tracer.toLowerCase());
});

test('before EVM activation: debug_traceTransaction answers "tx is not an EVM transaction", native_traceTransaction works', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const v = randomKeyPair();
  saveValidatorKey(tmp.dir, v);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, {
    network: 'testnet',
    chainId: 7120,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: { dposBft: 0, evm: 1_000_000, rewardV2: 0, tokenomicsV2: 0, nft: 1_000_000 },
    validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v' }],
    alloc: new Map([[devKey(0).address, 10_000n * BASE_PER_COIN]]),
    evmHardfork: 'prague',
    epochLength: 3600,
  });
  const n = await startTestNode({ dataDir: tmp.dir, genesisFile });
  t.teardown(() => n.stop());
  const id = `0x${await sendNative(n.url, devKey(0), devKey(5).address, 1_000n, 0n)}`;
  await waitFor(async () => (await rpc(n.url, 'native_traceTransaction', [id])).result, 15_000, 'native trace');
  t.deepEqual((await rpc(n.url, 'debug_traceTransaction', [id])).error, {
    code: -32000,
    message: 'tx is not an EVM transaction',
  });
  t.like(await rpcOk(n.url, 'native_traceTransaction', [id]), {
    op: 'NativeTransfer',
    amount_base: 1_000,
    to: devKey(5).address,
  });
});
