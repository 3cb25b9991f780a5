import test from 'ava';
import { ethers } from 'ethers';
import { compiled } from '../helpers/contracts.js';
import { errorStringData, ethersProvider, ethersWallet, rejection, restBalance, rpc, rpcOk } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';

// One node for the file; tests run concurrently, so each test signs with its own dev account.
let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const WAIT_MS = 30_000;

/** Dev account i on its own provider (destroyed when the test ends). */
function wallet(t: { teardown(fn: () => void): void }, i: number): ethers.Wallet {
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  return ethersWallet(n.url, i, provider);
}

async function deployBox(w: ethers.Wallet, initial = 42n): Promise<{ box: ethers.Contract; receipt: ethers.TransactionReceipt }> {
  const { abi, bytecode } = compiled('Box');
  const deployed = await new ethers.ContractFactory(abi, bytecode, w).deploy(initial);
  const receipt = (await deployed.deploymentTransaction()!.wait(1, WAIT_MS))!;
  return { box: deployed as ethers.Contract, receipt };
}

/** Send (a contract method call's promise) and wait for the receipt. */
async function mined(sent: Promise<ethers.ContractTransactionResponse>): Promise<ethers.TransactionReceipt> {
  return (await (await sent).wait(1, WAIT_MS))!;
}

test('ethers: ContractFactory deploy, receipts, calls, events with indexed filters, getLogs by address/topic/range', async (t) => {
  const w = wallet(t, 0);
  const provider = w.provider as ethers.JsonRpcProvider;
  const nonce = await provider.getTransactionCount(w.address);
  const { box, receipt: deployRc } = await deployBox(w);
  const address = await box.getAddress();
  t.is(deployRc.status, 1);
  t.is(deployRc.contractAddress, address);
  t.is(address, ethers.getCreateAddress({ from: w.address, nonce }));
  t.is(deployRc.logs.length, 0);
  t.is(await box.value(), 42n);
  t.is(await box.get(), 42n);
  t.is(await box.owner(), w.address);
  t.is(await provider.getCode(address), compiled('Box').deployedBytecode);

  const rc1 = await mined(box.store(7n));
  t.is(rc1.status, 1);
  t.is(rc1.to, address);
  t.is(rc1.logs.length, 1);
  const parsed = box.interface.parseLog(rc1.logs[0])!;
  t.is(parsed.name, 'Stored');
  t.deepEqual([...parsed.args], [w.address, 7n, 'stored']);
  const tag = ethers.id('tag-1');
  const rc2 = await mined(box.storeAndPing(8n, tag));
  t.is(rc2.logs.length, 2);
  t.deepEqual(
    rc2.logs.map((l) => l.index),
    [rc2.logs[0].index, rc2.logs[0].index + 1],
  );
  t.is(await box.value(), 8n);
  t.is(await box.writes(w.address), 2n);
  t.is(BigInt(await provider.getStorage(address, 0)), 8n);

  // Contract filters with indexed arguments.
  const mine = await box.queryFilter(box.filters.Stored(w.address), deployRc.blockNumber, 'latest');
  t.deepEqual(
    mine.map((e) => (e as ethers.EventLog).args.value),
    [7n, 8n],
  );
  const eight = await box.queryFilter(box.filters.Stored(null, 8n), deployRc.blockNumber);
  t.is(eight.length, 1);
  t.is(eight[0].blockNumber, rc2.blockNumber);
  t.is(eight[0].transactionHash, rc2.hash);
  t.is((eight[0] as ethers.EventLog).eventName, 'Stored');
  t.is((eight[0] as ethers.EventLog).args.note, 'stored');
  const pinged = await box.queryFilter(box.filters.Pinged(w.address, tag), deployRc.blockNumber);
  t.is(pinged.length, 1);
  t.is((pinged[0] as ethers.EventLog).args.seq, 2n);
  t.is((await box.queryFilter(box.filters.Pinged(w.address, ethers.id('other')), deployRc.blockNumber)).length, 0);

  // provider.getLogs by address, topic and block range.
  const all = await provider.getLogs({ address, fromBlock: rc1.blockNumber, toBlock: rc2.blockNumber });
  t.deepEqual(
    all.map((l) => [l.blockNumber, l.transactionHash]),
    [
      [rc1.blockNumber, rc1.hash],
      [rc2.blockNumber, rc2.hash],
      [rc2.blockNumber, rc2.hash],
    ],
  );
  const storedTopic = box.interface.getEvent('Stored')!.topicHash;
  const byTopic = await provider.getLogs({
    address,
    topics: [storedTopic],
    fromBlock: rc2.blockNumber,
    toBlock: rc2.blockNumber,
  });
  t.is(byTopic.length, 1);
  t.is(byTopic[0].topics[2], ethers.toBeHex(8n, 32));
  const whoTopic = ethers.zeroPadValue(w.address, 32);
  t.is((await provider.getLogs({ topics: [null, whoTopic], fromBlock: rc1.blockNumber, toBlock: rc2.blockNumber })).length, 3);
  if (rc1.blockNumber > deployRc.blockNumber) {
    t.deepEqual(await provider.getLogs({ address, fromBlock: deployRc.blockNumber, toBlock: rc1.blockNumber - 1 }), []);
  }
});

test('ethers: revert reasons from calls, estimateGas and a mined failing transaction; custom errors and panics', async (t) => {
  const w = wallet(t, 1);
  const { box } = await deployBox(w);
  const call = await rejection(box.fail());
  t.is(call.code, 'CALL_EXCEPTION');
  t.is(call.reason, 'Box: nope');
  t.is(call.data, errorStringData('Box: nope'));
  t.is(call.revert?.name, 'Error');

  const est = await rejection(box.storeChecked.estimateGas(13n));
  t.is(est.code, 'CALL_EXCEPTION');
  t.is(est.reason, 'Box: unlucky');
  // Sending through estimateGas fails before anything is submitted.
  t.is((await rejection(box.storeChecked(13n))).reason, 'Box: unlucky');

  // With an explicit gas limit the transaction is mined and fails: status 0, no logs, state unchanged.
  const tx = await box.storeChecked(13n, { gasLimit: 100_000n });
  const mined = await rejection(tx.wait(1, WAIT_MS));
  t.is(mined.code, 'CALL_EXCEPTION');
  t.is(mined.receipt.status, 0);
  const raw = await rpcOk(n.url, 'eth_getTransactionReceipt', [tx.hash]);
  t.is(raw.status, '0x0');
  t.deepEqual(raw.logs, []);
  t.true(BigInt(raw.gasUsed) > 21_000n && BigInt(raw.gasUsed) < 100_000n);
  t.is(await box.value(), 42n);

  // Custom error (decoded from the ABI) and a Solidity panic.
  const other = wallet(t, 7);
  const custom = await rejection((box.connect(other) as ethers.Contract).onlyOwner());
  t.is(custom.code, 'CALL_EXCEPTION');
  t.is(custom.revert?.name, 'NotOwner');
  t.deepEqual([...custom.revert.args], [other.address]);
  t.true(await box.onlyOwner());
  const panic = await rejection(box.divide(1n, 0n));
  t.is(panic.code, 'CALL_EXCEPTION');
  t.is(panic.revert?.name, 'Panic');
  t.is(BigInt(panic.revert?.args[0]), 0x12n, 'division by zero');
});

test('ethers: EIP-1559 value transfer moves the REST balance (wei / 1e10) and charges gasUsed * effectiveGasPrice', async (t) => {
  const w = wallet(t, 2);
  const provider = w.provider as ethers.JsonRpcProvider;
  const to = ethers.Wallet.createRandom().address;
  const before = await provider.getBalance(w.address);
  const tx = await w.sendTransaction({ to, value: ethers.parseEther('1.5') });
  t.is(tx.type, 2);
  const rc = (await tx.wait(1, WAIT_MS))!;
  t.is(rc.status, 1);
  t.is(rc.type, 2);
  t.is(rc.gasUsed, 21_000n);
  t.is(await restBalance(n.url, to), 150_000_000n);
  t.is(await provider.getBalance(to), ethers.parseEther('1.5'));
  const after = await provider.getBalance(w.address);
  t.is(after, before - ethers.parseEther('1.5') - rc.gasUsed * rc.gasPrice);
  t.is(await restBalance(n.url, w.address), after / 10_000_000_000n);
  const fetched = (await provider.getTransaction(tx.hash))!;
  t.is(fetched.type, 2);
  t.is(fetched.maxFeePerGas, tx.maxFeePerGas);
  t.is(fetched.blockNumber, rc.blockNumber);
});

test('ethers: legacy (type 0, EIP-155) and EIP-2930 (type 1) transactions; unprotected legacy is refused', async (t) => {
  const w = wallet(t, 3);
  const provider = w.provider as ethers.JsonRpcProvider;
  const { box } = await deployBox(w);
  const address = await box.getAddress();
  const to = ethers.Wallet.createRandom().address;

  const legacy = await w.sendTransaction({ type: 0, to, value: 1_000_000_000_000n });
  const lrc = (await legacy.wait(1, WAIT_MS))!;
  t.is(lrc.status, 1);
  t.is(lrc.type, 0);
  const lraw = await rpcOk(n.url, 'eth_getTransactionByHash', [legacy.hash]);
  t.is(lraw.type, '0x0');
  t.is(lraw.chainId, '0x1bd0');
  t.true([7120n * 2n + 35n, 7120n * 2n + 36n].includes(BigInt(lraw.v)), lraw.v);
  t.is(lraw.gasPrice, ethers.toQuantity(legacy.gasPrice!));
  t.is(lraw.accessList, undefined);
  t.is(await restBalance(n.url, to), 100n);

  const accessList = [{ address, storageKeys: [ethers.ZeroHash] }];
  const typed1 = await w.sendTransaction({
    type: 1,
    to: address,
    data: box.interface.encodeFunctionData('store', [5n]),
    accessList,
  });
  const rc1 = (await typed1.wait(1, WAIT_MS))!;
  t.is(rc1.status, 1);
  t.is(rc1.type, 1);
  t.is(await box.value(), 5n);
  const raw1 = await rpcOk(n.url, 'eth_getTransactionByHash', [typed1.hash]);
  t.is(raw1.type, '0x1');
  t.deepEqual(raw1.accessList, [{ address: address.toLowerCase(), storageKeys: [ethers.ZeroHash] }]);
  t.true(raw1.yParity === '0x0' || raw1.yParity === '0x1');
  t.is(raw1.maxFeePerGas, undefined);
  const fetched = (await provider.getTransaction(typed1.hash))!;
  t.is(fetched.type, 1);
  t.deepEqual(
    fetched.accessList?.map((a) => a.address),
    [address],
  );

  // A legacy transaction without EIP-155 replay protection (v = 27/28) is refused at admission.
  const unprotected = await w.signTransaction({
    type: 0,
    to,
    value: 1n,
    gasLimit: 21_000n,
    gasPrice: 1_000_000_000n,
    nonce: await provider.getTransactionCount(w.address),
    chainId: 0n,
  });
  t.true([27, 28].includes(ethers.Transaction.from(unprotected).signature!.v));
  const refused = await rpc(n.url, 'eth_sendRawTransaction', [unprotected]);
  t.is(refused.error?.code, -32603);
  t.regex(refused.error!.message, /replay-protected/);
});

test('ethers: ERC-20 token transfer, approve and transferFrom with Transfer/Approval events', async (t) => {
  const w = wallet(t, 4);
  const spender = wallet(t, 6);
  const { abi, bytecode } = compiled('Token');
  const supply = ethers.parseEther('1000000');
  const token = (await new ethers.ContractFactory(abi, bytecode, w).deploy('Test', 'TST', supply)) as ethers.Contract;
  const deployRc = (await token.deploymentTransaction()!.wait(1, WAIT_MS))!;
  t.is(deployRc.logs.length, 1, 'mint Transfer from the zero address');
  t.is(await token.symbol(), 'TST');
  t.is(await token.decimals(), 18n);
  const to = ethers.Wallet.createRandom().address;
  const rc = await mined(token.transfer(to, 1234n));
  const ev = token.interface.parseLog(rc.logs[0])!;
  t.deepEqual([ev.name, ...ev.args], ['Transfer', w.address, to, 1234n]);
  t.is(await token.balanceOf(to), 1234n);
  t.is(await token.balanceOf(w.address), supply - 1234n);

  await mined(token.approve(spender.address, 1000n));
  const asSpender = token.connect(spender) as ethers.Contract;
  await mined(asSpender.transferFrom(w.address, to, 600n));
  t.is(await token.allowance(w.address, spender.address), 400n);
  t.is(await token.balanceOf(to), 1834n);
  const over = await rejection(asSpender.transferFrom(w.address, to, 401n));
  t.is(over.reason, 'Token: allowance');

  const incoming = await token.queryFilter(token.filters.Transfer(null, to), deployRc.blockNumber);
  t.deepEqual(
    incoming.map((e) => (e as ethers.EventLog).args.value),
    [1234n, 600n],
  );
  const approvals = await token.queryFilter(token.filters.Approval(w.address, spender.address), deployRc.blockNumber);
  t.is(approvals.length, 1);
  t.is((await token.queryFilter(token.filters.Transfer(), deployRc.blockNumber)).length, 3);
});
