import test from 'ava';
import { ethers } from 'ethers';
import { compiled } from '../helpers/contracts.js';
import { devKey, errorStringData, ethersProvider, ethersWallet, rpc, rpcOk, sendNative, waitReceipt } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

// One node for the file; tests run concurrently, so each test signs with its own dev accounts.
let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const iface = new ethers.Interface(compiled('Box').abi);
const QTY = /^0x(0|[1-9a-f][0-9a-f]*)$/;
const HASH = /^0x[0-9a-f]{64}$/;
const GWEI = 1_000_000_000n;
const ZERO_BLOOM = `0x${'00'.repeat(256)}`;
const RECEIPT_KEYS = [
  'blockHash',
  'blockNumber',
  'contractAddress',
  'cumulativeGasUsed',
  'effectiveGasPrice',
  'from',
  'gasUsed',
  'logs',
  'logsBloom',
  'status',
  'to',
  'transactionHash',
  'transactionIndex',
  'type',
];
const LOG_KEYS = [
  'address',
  'blockHash',
  'blockNumber',
  'data',
  'logIndex',
  'removed',
  'topics',
  'transactionHash',
  'transactionIndex',
];
const BLOCK_KEYS = [
  'baseFeePerGas',
  'difficulty',
  'extraData',
  'gasLimit',
  'gasUsed',
  'hash',
  'logsBloom',
  'miner',
  'mixHash',
  'nonce',
  'number',
  'parentHash',
  'receiptsRoot',
  'sha3Uncles',
  'size',
  'stateRoot',
  'timestamp',
  'transactions',
  'transactionsRoot',
  'uncles',
];
const TX_1559_KEYS = [
  'accessList',
  'blockHash',
  'blockNumber',
  'chainId',
  'from',
  'gas',
  'gasPrice',
  'hash',
  'input',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'nonce',
  'r',
  's',
  'to',
  'transactionIndex',
  'type',
  'v',
  'value',
  'yParity',
];

const hasKeys = (o: Record<string, unknown>, keys: string[]): string[] => keys.filter((k) => !(k in o));

/** Ethereum bloom membership (3 bits of keccak256(item)). */
function inBloom(bloomHex: string, item: string): boolean {
  const bloom = ethers.getBytes(bloomHex);
  const h = ethers.getBytes(ethers.keccak256(item));
  for (const i of [0, 2, 4]) {
    const bit = ((h[i] << 8) | h[i + 1]) & 2047;
    if (!((bloom[255 - (bit >> 3)] >> (bit & 7)) & 1)) return false;
  }
  return true;
}

async function deployBox(w: ethers.Wallet, initial: bigint) {
  const { abi, bytecode } = compiled('Box');
  const sent = await w.sendTransaction(await new ethers.ContractFactory(abi, bytecode, w).getDeployTransaction(initial));
  const rc = await waitReceipt(n.url, sent.hash);
  return { address: rc.contractAddress as string, rc, sent };
}

test('receipts, transactions, blocks, eth_getBlockReceipts (tag, hash, {blockHash}, {blockNumber}) and eth_feeHistory', async (t) => {
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 0, provider);
  const { address, rc: deployRc, sent: deployTx } = await deployBox(w, 1n);
  const recipient = ethers.Wallet.createRandom().address.toLowerCase();
  const [nativeId, stored] = await Promise.all([
    sendNative(n.url, devKey(1), recipient, 1000n, 0n),
    w.sendTransaction({ to: address, data: iface.encodeFunctionData('store', [7n]) }),
  ]);
  const [nativeRc, storeRc] = await Promise.all([waitReceipt(n.url, `0x${nativeId}`), waitReceipt(n.url, stored.hash)]);

  for (const r of [deployRc, nativeRc, storeRc]) {
    t.deepEqual(hasKeys(r, RECEIPT_KEYS), []);
    for (const k of ['blockNumber', 'transactionIndex', 'status', 'gasUsed', 'cumulativeGasUsed', 'effectiveGasPrice', 'type'])
      t.regex(r[k], QTY, k);
    t.regex(r.blockHash, HASH);
    t.regex(r.logsBloom, /^0x[0-9a-f]{512}$/);
    // cumulativeGasUsed counts EVM gas only (native transfers report 21000 but add none), see docs/evm.md.
    if (r !== nativeRc) t.true(BigInt(r.cumulativeGasUsed) >= BigInt(r.gasUsed));
  }
  t.is(deployRc.to, null);
  t.is(deployRc.contractAddress, ethers.getCreateAddress({ from: w.address, nonce: 0 }).toLowerCase());
  t.is(deployRc.from, devKey(0).address);
  t.deepEqual([deployRc.status, deployRc.type, deployRc.logsBloom], ['0x1', '0x2', ZERO_BLOOM]);
  t.deepEqual(
    [nativeRc.status, nativeRc.gasUsed, nativeRc.type, nativeRc.to, nativeRc.contractAddress, nativeRc.logs],
    ['0x1', '0x5208', '0x0', recipient, null, []],
  );
  t.is(BigInt(nativeRc.effectiveGasPrice), GWEI);
  t.deepEqual([storeRc.status, storeRc.to, storeRc.contractAddress], ['0x1', address, null]);
  // 1559 price actually paid: flat base fee + min(tip, maxFee - base fee).
  const tip =
    stored.maxPriorityFeePerGas! < stored.maxFeePerGas! - GWEI ? stored.maxPriorityFeePerGas! : stored.maxFeePerGas! - GWEI;
  t.is(BigInt(storeRc.effectiveGasPrice), GWEI + tip);
  t.is(storeRc.logs.length, 1);
  const log = storeRc.logs[0];
  t.deepEqual(hasKeys(log, LOG_KEYS), []);
  t.deepEqual(
    [log.address, log.topics[0], log.topics[2], log.blockHash, log.transactionHash, log.removed],
    [address, iface.getEvent('Stored')!.topicHash, ethers.toBeHex(7n, 32), storeRc.blockHash, stored.hash, false],
  );
  t.true(
    inBloom(storeRc.logsBloom, address) && inBloom(storeRc.logsBloom, log.topics[0]) && inBloom(storeRc.logsBloom, log.topics[1]),
  );
  t.false(inBloom(storeRc.logsBloom, recipient));

  // eth_getTransactionByHash of an EVM transaction: every field, and the signature re-derives hash and sender.
  const tx = await rpcOk(n.url, 'eth_getTransactionByHash', [stored.hash]);
  t.deepEqual(hasKeys(tx, TX_1559_KEYS), []);
  t.deepEqual([tx.type, tx.to, tx.input, tx.chainId, tx.blockHash], ['0x2', address, stored.data, '0x1bd0', storeRc.blockHash]);
  t.is(tx.v, tx.yParity);
  const rebuilt = ethers.Transaction.from({
    type: 2,
    chainId: BigInt(tx.chainId),
    nonce: Number(tx.nonce),
    maxFeePerGas: BigInt(tx.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas),
    gasLimit: BigInt(tx.gas),
    to: tx.to,
    value: BigInt(tx.value),
    data: tx.input,
    accessList: tx.accessList,
    signature: { r: tx.r, s: tx.s, yParity: Number(tx.yParity) as 0 | 1 },
  });
  t.is(rebuilt.hash, stored.hash);
  t.is(rebuilt.from?.toLowerCase(), tx.from);
  const deployed = await rpcOk(n.url, 'eth_getTransactionByHash', [deployTx.hash]);
  t.is(deployed.to, null);
  t.true(deployed.input.startsWith(compiled('Box').bytecode));
  const nativeTx = await rpcOk(n.url, 'eth_getTransactionByHash', [`0x${nativeId}`]);
  t.deepEqual([nativeTx.type, nativeTx.input, nativeTx.gas, nativeTx.to], ['0x0', '0x', '0x5208', recipient]);
  t.is(BigInt(nativeTx.value), 1000n * 10_000_000_000n);

  // Blocks: the fields ethers and viem read; gasUsed counts EVM gas; the bloom is the OR of the receipts'.
  const block = await rpcOk(n.url, 'eth_getBlockByNumber', [storeRc.blockNumber, false]);
  t.deepEqual(hasKeys(block, BLOCK_KEYS), []);
  t.true(block.transactions.includes(stored.hash));
  t.deepEqual(await rpcOk(n.url, 'eth_getBlockByHash', [block.hash, false]), block);
  const receipts = await rpcOk<any[]>(n.url, 'eth_getBlockReceipts', [storeRc.blockNumber]);
  t.deepEqual(
    receipts.map((r) => r.transactionHash),
    block.transactions,
  );
  t.deepEqual(
    receipts.find((r) => r.transactionHash === stored.hash),
    storeRc,
  );
  const evmGas = receipts.filter((r) => r.transactionHash !== `0x${nativeId}`).reduce((s, r) => s + BigInt(r.gasUsed), 0n);
  t.is(BigInt(block.gasUsed), evmGas);
  t.is(block.gasLimit, '0x1c9c380');
  t.is(block.baseFeePerGas, '0x3b9aca00');
  const orBloom = receipts.reduce((acc, r) => acc | BigInt(r.logsBloom), 0n);
  t.is(BigInt(block.logsBloom), orBloom);
  const full = await rpcOk(n.url, 'eth_getBlockByNumber', [storeRc.blockNumber, true]);
  t.deepEqual(
    full.transactions.find((x: any) => x.hash === stored.hash),
    tx,
  );

  // eth_getBlockReceipts: by number, hash, {blockHash}, {blockNumber}, and tags; null for unknown blocks.
  for (const ref of [block.hash, { blockHash: block.hash }, { blockNumber: storeRc.blockNumber }]) {
    t.deepEqual(await rpcOk(n.url, 'eth_getBlockReceipts', [ref]), receipts, JSON.stringify(ref));
  }
  t.deepEqual(await rpcOk(n.url, 'eth_getBlockReceipts', ['earliest']), []);
  const latest = await rpcOk<any[]>(n.url, 'eth_getBlockReceipts', ['latest']);
  t.true(Array.isArray(latest));
  t.is(await rpcOk(n.url, 'eth_getBlockReceipts', [ethers.id('no such block')]), null);
  t.is(await rpcOk(n.url, 'eth_getBlockReceipts', ['0xffffffff']), null);
  t.deepEqual(await rpcOk(n.url, 'eth_getTransactionReceipt', [`0x${nativeId}`]), nativeRc);
  t.is(await rpcOk(n.url, 'eth_getTransactionReceipt', [ethers.id('unknown tx')]), null);

  // eth_feeHistory: flat base fee and rewards, gasUsedRatio = EVM gas / 30M (> 0 where EVM gas was spent).
  const fh = await rpcOk(n.url, 'eth_feeHistory', ['0x3', storeRc.blockNumber, [10, 90]]);
  t.is(Number(fh.oldestBlock), Number(storeRc.blockNumber) - 2);
  t.deepEqual(fh.baseFeePerGas, Array(4).fill('0x3b9aca00'));
  t.deepEqual(fh.reward, Array(3).fill(['0x3b9aca00', '0x3b9aca00']));
  t.is(fh.gasUsedRatio[2], Number(evmGas) / 30_000_000);
  t.true(fh.gasUsedRatio[2] > 0);
  const deployFh = await rpcOk(n.url, 'eth_feeHistory', ['0x1', deployRc.blockNumber, []]);
  t.true(deployFh.gasUsedRatio[0] >= Number(BigInt(deployRc.gasUsed)) / 30_000_000);
  t.is(deployFh.reward, undefined);
});

test('eth_call / eth_estimateGas / eth_getCode / eth_getStorageAt: block refs, revert errors (code 3 + data), access lists', async (t) => {
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 2, provider);
  const { address, rc, sent: deployTx } = await deployBox(w, 11n);
  const call = (data: string, ref?: unknown, from = w.address) =>
    rpc(n.url, 'eth_call', ref === undefined ? [{ from, to: address, data }] : [{ from, to: address, data }, ref]);
  const value = iface.encodeFunctionData('value');
  for (const ref of [undefined, 'latest', 'pending', 'safe', 'finalized', { blockNumber: 'latest' }]) {
    t.is(BigInt((await call(value, ref)).result), 11n, JSON.stringify(ref));
  }
  // The head by number or hash is served (retried: blocks keep coming while we ask).
  await waitFor(async () => (await call(value, await rpcOk(n.url, 'eth_blockNumber'))).result, 10_000, 'call at head number');
  await waitFor(
    async () => (await call(value, { blockHash: (await rpcOk(n.url, 'eth_getBlockByNumber', ['latest', false])).hash })).result,
    10_000,
    'call at head hash',
  );
  // Older blocks are served from the state history: before the deployment the contract has no code and no storage.
  const before = ethers.toQuantity(Number(rc.blockNumber) - 1);
  t.is((await call(value, before)).result, '0x');
  t.is(await rpcOk(n.url, 'eth_getCode', [address, before]), '0x');
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [address, '0x0', before]), ethers.ZeroHash);
  t.is(await rpcOk(n.url, 'eth_getBalance', [address, before]), '0x0');
  t.is(await rpcOk(n.url, 'eth_getTransactionCount', [w.address, { blockNumber: before }]), ethers.toQuantity(deployTx.nonce));
  t.true(BigInt(await rpcOk(n.url, 'eth_estimateGas', [{ to: address, data: value }, before])) > 0n);
  t.is(BigInt((await call(value, rc.blockNumber)).result), 11n);
  t.is(BigInt((await call(value, { blockHash: rc.blockHash })).result), 11n);
  t.is(await rpcOk(n.url, 'eth_getCode', [address, rc.blockNumber]), compiled('Box').deployedBytecode);
  t.is((await call(value, '0xffffffff')).error?.message, 'header not found');
  t.is((await call(value, { blockHash: ethers.id('unknown') })).error?.message, 'header not found');
  t.is((await rpc(n.url, 'eth_getCode', [address, { blockHash: ethers.id('unknown') }])).error?.code, -32000);

  // eth_getCode / eth_getStorageAt.
  t.is(await rpcOk(n.url, 'eth_getCode', [address, 'latest']), compiled('Box').deployedBytecode);
  t.is(await rpcOk(n.url, 'eth_getCode', [ethers.Wallet.createRandom().address, 'latest']), '0x');
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [address, '0x0', 'latest']), ethers.toBeHex(11n, 32));
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [address, '0x1', 'latest']), ethers.zeroPadValue(w.address, 32).toLowerCase());
  t.is(await rpcOk(n.url, 'eth_getStorageAt', [address, '0x5', 'latest']), ethers.ZeroHash);

  // Reverts: code 3, "execution reverted: <reason>", data = the ABI revert data.
  const fail = await call(iface.encodeFunctionData('fail'));
  t.deepEqual(fail.error, { code: 3, message: 'execution reverted: Box: nope', data: errorStringData('Box: nope') });
  const stranger = ethers.Wallet.createRandom().address;
  const custom = await call(iface.encodeFunctionData('onlyOwner'), 'latest', stranger);
  t.deepEqual(custom.error, { code: 3, message: 'execution reverted', data: iface.encodeErrorResult('NotOwner', [stranger]) });
  const panic = await call(iface.encodeFunctionData('divide', [1n, 0n]));
  t.is(panic.error?.code, 3);
  t.regex(panic.error!.message, /^execution reverted/);
  t.is(panic.error?.data, `0x4e487b71${ethers.toBeHex(0x12n, 32).slice(2)}`);
  const est = await rpc(n.url, 'eth_estimateGas', [
    { from: w.address, to: address, data: iface.encodeFunctionData('storeChecked', [13n]) },
  ]);
  t.deepEqual(est.error, { code: 3, message: 'execution reverted: Box: unlucky', data: errorStringData('Box: unlucky') });

  // eth_estimateGas charges and warms an access list, so a type-1 transaction with the estimate succeeds.
  const data = iface.encodeFunctionData('store', [12n]);
  const accessList = [{ address, storageKeys: [ethers.ZeroHash] }];
  const plain = BigInt(await rpcOk(n.url, 'eth_estimateGas', [{ from: w.address, to: address, data }]));
  const withList = BigInt(await rpcOk(n.url, 'eth_estimateGas', [{ from: w.address, to: address, data, accessList }]));
  // On --dev both are exact (no spec floor); the list never lowers the estimate.
  t.true(plain > 21_000n && plain < 100_000n, String(plain));
  t.true(withList >= plain, `${withList} >= ${plain}`);
  t.is((await rpc(n.url, 'eth_estimateGas', [{ to: address, data, accessList: [{ address: '0x12' }] }])).error?.code, -32602);
  const raw = await w.signTransaction({
    type: 1,
    chainId: 7120n,
    nonce: await provider.getTransactionCount(w.address, 'pending'),
    to: address,
    data,
    accessList,
    gasLimit: withList,
    gasPrice: GWEI,
  });
  const sent = await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  const typed1 = await waitReceipt(n.url, sent);
  t.is(typed1.status, '0x1');
  t.is(typed1.type, '0x1');
  t.true(BigInt(typed1.gasUsed) <= withList);
});

test('every eth_ method of the spec table answers with its shape', async (t) => {
  const a = devKey(3).address;
  const batch = [
    ['eth_chainId', []],
    ['eth_blockNumber', []],
    ['eth_gasPrice', []],
    ['eth_estimateGas', [{ from: a, to: devKey(4).address, value: '0x1' }]],
    ['eth_getBalance', [a, 'latest']],
    ['eth_getTransactionCount', [a, 'latest']],
    ['eth_getBlockByNumber', ['earliest', false]],
    ['eth_getBlockByHash', [ethers.id('nope'), false]],
    ['eth_getTransactionByHash', [ethers.id('nope')]],
    ['eth_getTransactionReceipt', [ethers.id('nope')]],
    ['eth_getBlockReceipts', ['earliest']],
    ['eth_sendRawTransaction', ['0x']],
    ['eth_call', [{ to: a }, 'latest']],
    ['eth_getLogs', [{ fromBlock: 'earliest', toBlock: '0x0' }]],
    ['eth_feeHistory', ['0x1', 'latest', []]],
    ['eth_maxPriorityFeePerGas', []],
    ['eth_syncing', []],
    ['eth_accounts', []],
    ['eth_getCode', [a, 'latest']],
    ['eth_getStorageAt', [a, '0x0', 'latest']],
  ] as const;
  const r = await Promise.all(batch.map(([m, p]) => rpc(n.url, m, [...p])));
  const res = r.map((x) => x.result);
  t.is(res[0], '0x1bd0');
  t.regex(res[1], QTY);
  t.is(res[2], '0x3b9aca00');
  t.is(res[3], '0x5208');
  t.is(BigInt(res[4]), 10_000n * 10n ** 18n);
  t.is(res[5], '0x0');
  t.is(res[6].number, '0x0');
  t.deepEqual([res[7], res[8], res[9]], [null, null, null]);
  t.deepEqual(res[10], []);
  t.is(r[11].error?.code, -32602);
  t.is(res[12], '0x');
  t.deepEqual(res[13], []);
  t.deepEqual(Object.keys(res[14]).sort(), ['baseFeePerGas', 'gasUsedRatio', 'oldestBlock']);
  t.is(res[15], '0x3b9aca00');
  t.is(res[16], false);
  t.deepEqual(
    res[17],
    Array.from({ length: 10 }, (_, i) => devKey(i).address),
  );
  t.is(res[18], '0x');
  t.is(res[19], ethers.ZeroHash);
});

test('eth_sendRawTransaction admission: foreign chain id, nonce, fee, gas and balance rules, duplicates, garbage', async (t) => {
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 5, provider);
  const to = devKey(6).address;
  const base = { to, nonce: 0, gasLimit: 21_000n, maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: 1n, chainId: 7120n };
  const send = async (tx: ethers.TransactionRequest) =>
    (await rpc(n.url, 'eth_sendRawTransaction', [await w.signTransaction(tx)])).error;
  const { maxFeePerGas: _, maxPriorityFeePerGas: __, ...untyped } = base;
  for (const tx of [
    { ...untyped, type: 0, gasPrice: GWEI },
    { ...untyped, type: 1, gasPrice: GWEI },
    { ...base, type: 2 },
  ]) {
    const e = await send({ ...tx, chainId: 1n });
    // A well-formed transaction for another chain is an admission rejection, like the other rules.
    t.is(e?.code, -32603, `type ${tx.type}`);
    t.is(e?.message, 'invalid chain id for signer: signed for chain 1, this chain is 7120', `type ${tx.type}`);
  }
  const low = await send({ ...base, maxFeePerGas: GWEI - 1n });
  t.deepEqual(low, {
    code: -32603,
    message: `max fee per gas less than block base fee: max fee per gas ${GWEI - 1n} below the base fee ${GWEI}`,
  });
  t.regex((await send({ ...base, gasLimit: 20_999n }))?.message ?? '', /intrinsic gas too low: have 20999, want 21000/);
  // Osaka's per-transaction cap (EIP-7825, 2^24) comes before the 30M block limit on a new dev chain.
  t.regex((await send({ ...base, gasLimit: 16_777_217n }))?.message ?? '', /transaction gas limit too high/);
  t.regex(
    (await send({ ...base, value: 10n ** 30n }))?.message ?? '',
    /^insufficient funds for gas \* price \+ value: available/,
  );
  t.deepEqual(await send({ ...base, nonce: 3 }), { code: -32603, message: 'nonce too high: expected 0, got 3' });
  t.is((await rpc(n.url, 'eth_sendRawTransaction', ['0x1234'])).error?.code, -32602);
  const raw = await w.signTransaction(base);
  const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [raw]);
  t.is(hash, ethers.keccak256(raw));
  const again = (await rpc(n.url, 'eth_sendRawTransaction', [raw])).error;
  t.is(again?.code, -32603);
  t.true(['already known: already in mempool', 'nonce too low: expected 1, got 0'].includes(again!.message), again!.message);
  t.is((await waitReceipt(n.url, hash)).status, '0x1');
  t.deepEqual(await send(base), { code: -32603, message: 'nonce too low: expected 1, got 0' });
});
