import test from 'ava';
import {
  type Abi,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  pad,
  parseEther,
  parseGwei,
  toHex,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { compiled } from '../helpers/contracts.js';
import { DEV_MNEMONIC, devKey, devPrivateKey, rejection, restBalance, rpcOk, viemChain } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';

// One node for the file; tests run concurrently, so each test signs with its own dev account.
let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const WAIT = { timeout: 30_000, pollingInterval: 50 } as const;
const box = () => ({ abi: compiled('Box').abi as Abi, bytecode: compiled('Box').bytecode });

function clients(account: ReturnType<typeof privateKeyToAccount> | ReturnType<typeof mnemonicToAccount>) {
  const chain = viemChain(n.url);
  return {
    pub: createPublicClient({ chain, transport: http(), pollingInterval: 50 }),
    wallet: createWalletClient({ account, chain, transport: http() }),
  };
}

async function deployBox(c: ReturnType<typeof clients>, initial = 42n) {
  const hash = await c.wallet.deployContract({ ...box(), args: [initial] });
  const receipt = await c.pub.waitForTransactionReceipt({ hash, ...WAIT });
  if (!receipt.contractAddress) throw new Error('no contract address');
  return { address: receipt.contractAddress, receipt };
}

test('viem: dev mnemonic accounts, deployContract, waitForTransactionReceipt, readContract, writeContract, events with args', async (t) => {
  const account = privateKeyToAccount(devPrivateKey(0));
  t.is(account.address, mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 0 }).address);
  t.is(account.address.toLowerCase(), devKey(0).address);
  const c = clients(account);
  t.is(await c.pub.getChainId(), 7120);
  t.true((await c.pub.getBalance({ address: account.address })) > parseEther('9000'));
  const { address, receipt: deployRc } = await deployBox(c);
  t.is(deployRc.status, 'success');
  t.is(await c.pub.getCode({ address }), compiled('Box').deployedBytecode);
  const { abi } = box();
  t.is(await c.pub.readContract({ address, abi, functionName: 'value' }), 42n);

  const hash = await c.wallet.writeContract({ address, abi, functionName: 'store', args: [99n] });
  const rc = await c.pub.waitForTransactionReceipt({ hash, ...WAIT });
  t.is(rc.status, 'success');
  t.is(rc.logs.length, 1);
  t.is(await c.pub.readContract({ address, abi, functionName: 'get' }), 99n);
  const tag = pad('0x0b0b', { size: 32 });
  const rc2 = await c.pub.waitForTransactionReceipt({
    hash: await c.wallet.writeContract({ address, abi, functionName: 'storeAndPing', args: [100n, tag] }),
    ...WAIT,
  });

  const stored = abi.find((x) => x.type === 'event' && x.name === 'Stored') as any;
  const byWho = await c.pub.getLogs({ address, event: stored, args: { who: account.address }, fromBlock: deployRc.blockNumber });
  t.deepEqual(
    byWho.map((l: any) => l.args.value),
    [99n, 100n],
  );
  const byValue = await c.pub.getLogs({ address, event: stored, args: { value: 100n }, fromBlock: deployRc.blockNumber });
  t.is(byValue.length, 1);
  t.is(byValue[0].transactionHash, rc2.transactionHash);
  t.is(byValue[0].blockNumber, rc2.blockNumber);
  const events = await c.pub.getContractEvents({
    address,
    abi,
    eventName: 'Pinged',
    args: { from: account.address, tag },
    fromBlock: deployRc.blockNumber,
    toBlock: rc2.blockNumber,
  });
  t.is(events.length, 1);
  t.deepEqual((events[0] as any).args, { from: account.address, tag, seq: 2n });
  t.is(events[0].logIndex, rc2.logs[1].logIndex);
  const none = await c.pub.getContractEvents({ address, abi, eventName: 'Stored', args: { value: 7n }, fromBlock: 0n });
  t.deepEqual(none, []);
});

test('viem: simulateContract revert gives ContractFunctionRevertedError with the reason; custom errors; estimateGas', async (t) => {
  const account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 1 });
  const c = clients(account);
  const { address } = await deployBox(c);
  const { abi } = box();

  const err = await rejection(c.pub.simulateContract({ account, address, abi, functionName: 'fail' }));
  t.true(err instanceof BaseError);
  const reverted = (err as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError;
  t.true(reverted instanceof ContractFunctionRevertedError);
  t.is(reverted.reason, 'Box: nope');
  t.is(reverted.data?.errorName, 'Error');

  const other = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 8 });
  const custom = await rejection(c.pub.simulateContract({ account: other, address, abi, functionName: 'onlyOwner' }));
  const customRevert = (custom as BaseError).walk(
    (e) => e instanceof ContractFunctionRevertedError,
  ) as ContractFunctionRevertedError;
  t.is(customRevert.data?.errorName, 'NotOwner');
  t.deepEqual(customRevert.data?.args, [other.address]);
  const ok = await c.pub.simulateContract({ account, address, abi, functionName: 'storeChecked', args: [12n] });
  t.is(ok.request.functionName, 'storeChecked');

  // estimateGas: 21000 for a plain transfer, the exact estimate with data, a revert for a reverting call.
  t.is(await c.pub.estimateGas({ account, to: other.address, value: 1n }), 21_000n);
  const callGas = await c.pub.estimateGas({
    account,
    to: address,
    data: encodeFunctionData({ abi, functionName: 'store', args: [5n] }),
  });
  // The call costs less than 100000 gas: --dev answers the exact estimate (the spec's 100000 floor is for mainnet and testnet).
  t.true(callGas > 21_000n && callGas < 100_000n, String(callGas));
  const estErr = await rejection(
    c.pub.estimateGas({ account, to: address, data: encodeFunctionData({ abi, functionName: 'storeChecked', args: [13n] }) }),
  );
  t.regex((estErr as BaseError).message, /Box: unlucky/);
  // The estimate is enough: a write with it succeeds.
  const hash = await c.wallet.writeContract({ address, abi, functionName: 'store', args: [5n], gas: callGas });
  t.is((await c.pub.waitForTransactionReceipt({ hash, ...WAIT })).status, 'success');
});

test('viem: getBlock fields, getFeeHistory gasUsedRatio, transactions of types legacy, eip2930 and eip1559', async (t) => {
  const account = privateKeyToAccount(devPrivateKey(2));
  const c = clients(account);
  const { address, receipt: deployRc } = await deployBox(c);

  const block = await c.pub.getBlock({ blockNumber: deployRc.blockNumber });
  t.is(block.number, deployRc.blockNumber);
  t.is(block.hash, deployRc.blockHash);
  t.true(block.transactions.includes(deployRc.transactionHash));
  t.is(block.gasLimit, 30_000_000n);
  t.true(block.gasUsed >= deployRc.gasUsed);
  t.is(block.baseFeePerGas, parseGwei('1'));
  t.true(block.timestamp > 1_600_000_000n);
  t.regex(block.miner, /^0x[0-9a-f]{40}$/);
  t.regex(block.logsBloom!, /^0x[0-9a-f]{512}$/);
  t.regex(block.stateRoot, /^0x[0-9a-f]{64}$/);
  const parent = await c.pub.getBlock({ blockNumber: deployRc.blockNumber - 1n });
  t.is(block.parentHash, parent.hash);
  t.deepEqual(await c.pub.getBlock({ blockHash: block.hash! }), block);
  const full = await c.pub.getBlock({ blockNumber: deployRc.blockNumber, includeTransactions: true });
  const deployTx = full.transactions.find((x) => x.hash === deployRc.transactionHash)!;
  t.is(deployTx.type, 'eip1559');
  t.is(deployTx.to, null);
  t.is(deployTx.from, account.address.toLowerCase() as `0x${string}`);
  t.is(deployTx.chainId, 7120);

  const history = await c.pub.getFeeHistory({ blockCount: 3, blockNumber: deployRc.blockNumber, rewardPercentiles: [25, 75] });
  t.is(history.oldestBlock, deployRc.blockNumber - 2n);
  t.is(history.gasUsedRatio.length, 3);
  t.is(history.gasUsedRatio[2], Number(block.gasUsed) / 30_000_000);
  t.true(history.gasUsedRatio[2] > 0);
  t.is(history.baseFeePerGas.length, 4);
  t.true(history.baseFeePerGas.every((f) => f === parseGwei('1')));
  t.deepEqual(history.reward?.[0], [parseGwei('1'), parseGwei('1')]);

  const to = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 9 }).address;
  const recipientBefore = await restBalance(n.url, to);
  const legacy = await c.wallet.sendTransaction({ type: 'legacy', to, value: parseEther('0.25') });
  const slot0 = pad('0x00', { size: 32 });
  const eip2930 = await c.wallet.sendTransaction({
    type: 'eip2930',
    to: address,
    data: encodeFunctionData({ abi: box().abi, functionName: 'store', args: [3n] }),
    accessList: [{ address, storageKeys: [slot0] }],
  });
  const eip1559 = await c.wallet.sendTransaction({ to, value: 1n, maxFeePerGas: parseGwei('3'), maxPriorityFeePerGas: 1n });
  const [r0, r1, r2] = await Promise.all(
    [legacy, eip2930, eip1559].map((hash) => c.pub.waitForTransactionReceipt({ hash, ...WAIT })),
  );
  t.deepEqual([r0.type, r1.type, r2.type], ['legacy', 'eip2930', 'eip1559']);
  t.deepEqual([r0.status, r1.status, r2.status], ['success', 'success', 'success']);
  t.is(r2.effectiveGasPrice, parseGwei('1') + 1n, 'flat base fee + tip');
  t.is(await c.pub.readContract({ address, abi: box().abi, functionName: 'value' }), 3n);
  t.is(await restBalance(n.url, to), recipientBefore + 25_000_000n, '0.25 coin + 1 wei (rounded down)');
  const tx0 = await c.pub.getTransaction({ hash: legacy });
  t.is(tx0.type, 'legacy');
  t.is(tx0.chainId, 7120);
  t.true(tx0.v === 7120n * 2n + 35n || tx0.v === 7120n * 2n + 36n);
  const tx1 = await c.pub.getTransaction({ hash: eip2930 });
  t.is(tx1.type, 'eip2930');
  t.deepEqual(tx1.accessList, [{ address: address.toLowerCase() as `0x${string}`, storageKeys: [slot0] }]);
  const tx2 = await c.pub.getTransaction({ hash: eip1559 });
  t.is(tx2.type, 'eip1559');
  t.is(tx2.maxFeePerGas, parseGwei('3'));
  t.is(tx2.maxPriorityFeePerGas, 1n);
  t.is(tx2.gasPrice, parseGwei('1') + 1n);
  t.is(await c.pub.getTransactionCount({ address: account.address }), 4);
  t.is(await c.pub.getStorageAt({ address, slot: toHex(0) }), pad('0x03', { size: 32 }));
  t.true((await c.pub.getBlockNumber({ cacheTime: 0 })) >= r2.blockNumber);
  t.is((await rpcOk(n.url, 'eth_getTransactionReceipt', [eip1559])).effectiveGasPrice, toHex(parseGwei('1') + 1n));
});
