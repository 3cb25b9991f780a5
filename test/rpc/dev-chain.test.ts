import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ethers } from 'ethers';
import { ConfigError, parseConfig } from '../../ts/node/index.js';
import { readFrames } from '../../ts/mempool/index.js';
import { createRpcDispatcher } from '../../ts/rpc/index.js';
import { warmUpRpc } from '../../ts/rpc/warm-up.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, devPrivateKey, rpc, rpcOk } from '../helpers/evm.js';
import { spawnNode } from '../helpers/child-node.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const iface = new ethers.Interface(compiled('Box').abi);
const wallet = (i: number) => new ethers.Wallet(devPrivateKey(i));

/** A signed EIP-1559 transfer (explicit nonce, no round trips). */
function transfer(i: number, to: string, value: bigint, nonce: number): Promise<string> {
  return wallet(i).signTransaction({
    type: 2,
    chainId: 7120n,
    to,
    value,
    nonce,
    gasLimit: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

const head = async (n: TestNode) => Number(await rpcOk(n.url, 'eth_blockNumber'));
const block = (n: TestNode, tag: string | number) =>
  rpcOk(n.url, 'eth_getBlockByNumber', [typeof tag === 'number' ? `0x${tag.toString(16)}` : tag, false]);
const validate = async (n: TestNode) => (await httpJson(`${n.url}/chain/validate`)).body;
const automine = () => startTestNode({ blockTimeMs: 0 });

test('--block-time-ms 0 is automine on --dev only; --anvil-compat is a dev option', (t) => {
  t.is(parseConfig(['--dev', '--block-time-ms', '0'], {}).blockTimeMs, 0);
  t.throws(() => parseConfig(['--network', 'testnet', '--block-time-ms', '0'], {}), { instanceOf: ConfigError });
  t.throws(() => parseConfig(['--block-time-ms', '49', '--dev'], {}), { instanceOf: ConfigError });
  t.true(parseConfig(['--dev', '--anvil-compat'], {}).anvilCompat);
  t.throws(() => parseConfig(['--anvil-compat'], {}), { instanceOf: ConfigError });
  t.true(parseConfig(['--dev'], {}).ws);
  t.false(parseConfig(['--network', 'testnet'], {}).ws);
  t.true(parseConfig(['--network', 'testnet', '--ws'], {}).ws);
  t.false(parseConfig(['--dev'], { NATIVE_WS: '0' }).ws);
  // Calls run on the main thread up to 100 ms on --dev only (docs/dev-chain.md, "Calls on the main thread").
  t.is(parseConfig(['--dev'], {}).rpcEvmInlineMs, 100);
  t.is(parseConfig(['--network', 'testnet'], {}).rpcEvmInlineMs, 0);
  t.is(parseConfig(['--dev', '--rpc-evm-inline', '0'], {}).rpcEvmInlineMs, 0);
  t.is(parseConfig(['--network', 'testnet'], { NATIVE_RPC_EVM_INLINE: '20ms' }).rpcEvmInlineMs, 20);
  t.throws(() => parseConfig(['--dev', '--rpc-evm-inline', '-1'], {}), { instanceOf: ConfigError });
});

test('the start-up warm-up leaves no trace: genesis head, empty pool, the first dev account untouched', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const [first] = await rpcOk(n.url, 'eth_accounts');
  t.is(await head(n), 0);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x0', queued: '0x0' });
  t.is(await rpcOk(n.url, 'eth_getTransactionCount', [first, 'pending']), '0x0');
  t.is(await rpcOk(n.url, 'eth_getBalance', [first, 'latest']), await rpcOk(n.url, 'eth_getBalance', [first, '0x0']));
  t.is(await rpcOk(n.url, 'eth_getCode', [ethers.getCreateAddress({ from: first, nonce: 0 }), 'latest']), '0x');
  t.true((await validate(n)).valid);
});

test("the JSON-RPC warm-up answers a suite's first requests in-process, then leaves the chain, clock, pool and snapshot ids as before", async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const accounts = await rpcOk(n.url, 'eth_accounts');
  const [first, last] = [accounts[0], accounts[9]];
  const genesis = await block(n, 'latest');
  // A pending state write and a moved clock: both are part of what the warm-up's first snapshot restores.
  await rpcOk(n.url, 'anvil_setBalance', [last, '0x1234']);
  const offset = Number(await rpcOk(n.url, 'evm_increaseTime', [500]));
  const events = await rpcOk(n.url, 'eth_newBlockFilter');
  // The node ran it at start (automine); once more here, where its result can be read: every step answered.
  t.true(await warmUpRpc(n.node.ctx, createRpcDispatcher(n.node.ctx)));
  t.is(await head(n), 0);
  t.deepEqual(await block(n, 'latest'), genesis);
  t.is(await rpcOk(n.url, 'eth_getBalance', [last, 'latest']), '0x1234');
  t.is(await rpcOk(n.url, 'eth_getBalance', [first, 'latest']), await rpcOk(n.url, 'eth_getBalance', [first, '0x0']));
  t.is(await rpcOk(n.url, 'eth_getTransactionCount', [first, 'pending']), '0x0');
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x0', queued: '0x0' });
  t.is(await rpcOk(n.url, 'eth_getCode', [ethers.getCreateAddress({ from: first, nonce: 0 }), 'latest']), '0x');
  // Ids count from 1 again, as on a node that never took a snapshot; the clock kept its offset, not the warm-up's.
  t.is(await rpcOk(n.url, 'evm_snapshot'), '0x1');
  t.is(Number(await rpcOk(n.url, 'evm_increaseTime', [0])), offset);
  // The next block is block 1, dated by the clock (the warm-up's evm_setNextBlockTimestamp was reverted).
  const before = Math.floor(Date.now() / 1000) + offset;
  await rpcOk(n.url, 'evm_mine');
  const mined = await block(n, 'latest');
  t.is(mined.number, '0x1');
  t.true(Number(mined.timestamp) >= before && Number(mined.timestamp) <= Math.floor(Date.now() / 1000) + offset);
  // A block filter installed before the warm-up sees block 1 only (the warm-up's blocks were rolled back).
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [events]), [mined.hash]);
  t.true((await validate(n)).valid);
});

test('evm_revert past a small block window: blocks, receipts and eth_getLogs (the window blooms) answer as before', async (t) => {
  // A window of 4 blocks: the 6 blocks mined after the snapshot reuse every window slot, so the revert must read
  // back the blocks (and blooms) the window reaches again.
  const n = await startTestNode({ blockTimeMs: 0, windowSize: 4 });
  t.teardown(() => n.stop());
  const [from] = await rpcOk(n.url, 'eth_accounts');
  const box = compiled('Box');
  const deploy = new ethers.ContractFactory(box.abi, box.bytecode).interface.encodeDeploy([1n]);
  const dep = await rpcOk(n.url, 'eth_sendTransaction', [{ from, data: box.bytecode + deploy.slice(2) }]);
  const address = (await rpcOk(n.url, 'eth_getTransactionReceipt', [dep])).contractAddress;
  const store = (v: bigint) =>
    rpcOk(n.url, 'eth_sendTransaction', [{ from, to: address, data: iface.encodeFunctionData('store', [v]) }]);
  for (let v = 1n; v <= 8n; v++) await store(v);
  const stored = iface.getEvent('Stored')?.topicHash as string;
  const logsOf = (value?: bigint) =>
    rpcOk(n.url, 'eth_getLogs', [
      {
        fromBlock: '0x0',
        toBlock: 'latest',
        address,
        topics: [stored, null, value === undefined ? null : ethers.toBeHex(value, 32)],
      },
    ]);
  const top = await head(n);
  const hashes = async () => Promise.all(Array.from({ length: top + 1 }, async (_, h) => (await block(n, h)).hash));
  const before = { logs: await logsOf(), hashes: await hashes() };
  const snap = await rpcOk(n.url, 'evm_snapshot');
  for (let v = 100n; v < 106n; v++) await store(v);
  t.true(await rpcOk(n.url, 'evm_revert', [snap]));
  t.is(await head(n), top);
  t.deepEqual(await hashes(), before.hashes);
  t.deepEqual(await logsOf(), before.logs);
  // By topic: each block of the window is found through its own bloom; a value of a removed block is gone.
  for (const v of [5n, 6n, 7n, 8n]) t.is((await logsOf(v)).length, 1, `value ${v}`);
  t.deepEqual(await logsOf(103n), []);
  await store(200n);
  t.is((await logsOf(200n)).length, 1);
});

test('automine: sends answered after their block skip the transaction journal and survive SIGKILL; without automine they are journaled', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '0'];
  // Records, not file sizes: the journal's segments are zero-filled ahead of the writes.
  const journalRecords = () =>
    readdirSync(join(tmp.dir, 'tx-journal')).reduce(
      (sum, f) => sum + readFrames(readFileSync(join(tmp.dir, 'tx-journal', f))).payloads.length,
      0,
    );
  let node = await spawnNode(args);
  t.teardown(() => node.proc.kill('SIGKILL'));
  const to = ethers.Wallet.createRandom().address;
  const mined: string[] = [];
  for (let nonce = 0; nonce < 3; nonce++)
    mined.push(await rpcOk(node.url, 'eth_sendRawTransaction', [await transfer(2, to, 1n, nonce)]));
  // eth_sendTransaction too: answered once mined, not journaled.
  const from = wallet(3).address;
  mined.push(await rpcOk(node.url, 'eth_sendTransaction', [{ from, to, value: '0x1' }]));
  t.is(journalRecords(), 0, 'nothing journaled under automine');
  // Killed right after the last answer: the committed blocks keep every answered transaction.
  node.proc.kill('SIGKILL');
  await node.exited;
  node = await spawnNode(args);
  for (const h of mined) t.truthy((await rpcOk(node.url, 'eth_getTransactionReceipt', [h]))?.blockNumber, h);
  t.is(await rpcOk(node.url, 'eth_getBalance', [to, 'latest']), '0x4');
  // Automine off: the transaction waits in the pool, so it is journaled before the answer and replayed after a crash.
  t.true(await rpcOk(node.url, 'evm_setAutomine', [false]));
  const pending = await rpcOk(node.url, 'eth_sendRawTransaction', [await transfer(2, to, 1n, 3)]);
  t.true(journalRecords() > 0, 'journaled without automine');
  node.proc.kill('SIGKILL');
  await node.exited;
  node = await spawnNode(args);
  // Replayed from the journal and, automine being on again (the flag), mined at start.
  const url = node.url;
  await waitFor(async () => (await rpcOk(url, 'eth_getTransactionReceipt', [pending]))?.blockNumber, 30_000, 'replayed tx mined');
  t.is(await rpcOk(node.url, 'eth_getBalance', [to, 'latest']), '0x5');
  node.proc.kill('SIGTERM');
  await node.exited;
});

test('automine: every transaction gets its own block before the send answers; the head moves only with them', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const start = await head(n);
  const to = ethers.Wallet.createRandom().address;
  const hashes = await Promise.all(
    [0, 1, 2].map(async (nonce) => rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(1, to, 1n, nonce)])),
  );
  // Answered after mining: every receipt is there at once, no polling.
  const receipts = await Promise.all(hashes.map((h) => rpcOk(n.url, 'eth_getTransactionReceipt', [h])));
  const heights = receipts.map((r) => Number(r.blockNumber)).sort((a, b) => a - b);
  t.deepEqual(heights, [start + 1, start + 2, start + 3]);
  for (const h of heights) t.is((await block(n, h)).transactions.length, 1);
  t.is(await head(n), start + 3);
  t.true(await rpcOk(n.url, 'hardhat_getAutomine'));
  // A REST/native submission is mined too.
  t.is(await rpcOk(n.url, 'eth_getBalance', [to, 'latest']), '0x3');
  t.true((await validate(n)).valid);
  // Three blocks produced (the start-up warm-up's blocks are not counted), none "late": automine has no slots.
  const metrics = await (await fetch(`${n.url}/metrics`)).text();
  t.regex(metrics, /^native_blocks_produced_total 3$/m);
  t.regex(metrics, /^native_blocks_late_total 0$/m);
});

test('manual mining: evm_setAutomine(false) keeps transactions pending; evm_mine and hardhat_mine make blocks with the timestamps asked', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  t.true(await rpcOk(n.url, 'evm_setAutomine', [false]));
  t.false(await rpcOk(n.url, 'anvil_getAutomine'));
  const to = ethers.Wallet.createRandom().address;
  const start = await head(n);
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(2, to, 5n, 0)]);
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(2, to, 5n, 1)]);
  t.is(await head(n), start);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x2', queued: '0x0' });
  // evm_mine takes every pending transaction into one block, dated as asked.
  const ts = (await block(n, 'latest')).timestamp;
  const at = Number(ts) + 1000;
  t.is(await rpcOk(n.url, 'evm_mine', [at]), '0x0');
  const mined = await block(n, 'latest');
  t.is(Number(mined.number), start + 1);
  t.is(mined.transactions.length, 2);
  t.is(Number(mined.timestamp), at);
  // hardhat_mine(5, 60): five blocks, a minute apart (the first dated by the clock, as any next block).
  t.true(await rpcOk(n.url, 'hardhat_mine', ['0x5', '0x3c']));
  t.is(await head(n), start + 6);
  const first = Number((await block(n, start + 2)).timestamp);
  t.true(first >= at);
  for (let i = 1; i < 5; i++) t.is(Number((await block(n, start + 2 + i)).timestamp), first + 60 * i);
  // Time goes on from the last block: the next block is not dated before it.
  t.true(await rpcOk(n.url, 'evm_setAutomine', [true]));
  const rc = await rpcOk(n.url, 'eth_getTransactionReceipt', [
    await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(2, to, 5n, 2)]),
  ]);
  t.true(Number((await block(n, Number(rc.blockNumber))).timestamp) >= first + 240);
  t.true((await validate(n)).valid);
});

test('time: evm_increaseTime and evm_setNextBlockTimestamp move block timestamps; the chain stays valid', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const before = Number((await block(n, 'latest')).timestamp);
  t.is(await rpcOk(n.url, 'evm_increaseTime', [3600]), '3600');
  t.is(await rpcOk(n.url, 'evm_increaseTime', ['0xe10']), '7200');
  await rpcOk(n.url, 'evm_mine');
  const after = Number((await block(n, 'latest')).timestamp);
  t.true(after >= before + 7200, `${after} vs ${before}`);
  const target = after + 365 * 86400;
  await rpcOk(n.url, 'evm_setNextBlockTimestamp', [target]);
  await rpcOk(n.url, 'evm_mine');
  t.is(Number((await block(n, 'latest')).timestamp), target);
  // A timestamp before the head's is refused.
  const refused = await rpc(n.url, 'evm_setNextBlockTimestamp', [before]);
  t.is(refused.error?.code, -32000);
  t.regex(refused.error?.message ?? '', /lower than or equal to the previous block's timestamp/);
  t.true((await validate(n)).valid);
});

test('accounts: eth_sendTransaction fills nonce, gas and fees and signs with the dev key; eth_sign, personal_sign and eth_signTypedData_v4 verify', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const accounts = await rpcOk<string[]>(n.url, 'eth_accounts');
  t.is(accounts.length, 10);
  t.is(accounts[0], devKey(0).address);
  const { bytecode } = compiled('Box');
  const deploy = `${bytecode}${ethers.AbiCoder.defaultAbiCoder().encode(['uint256'], [7n]).slice(2)}`;
  const hash = await rpcOk(n.url, 'eth_sendTransaction', [{ from: accounts[3], data: deploy }]);
  const rc = await rpcOk(n.url, 'eth_getTransactionReceipt', [hash]);
  t.is(rc.status, '0x1');
  t.is(rc.from, accounts[3]);
  const box = rc.contractAddress;
  const tx = await rpcOk(n.url, 'eth_getTransactionByHash', [hash]);
  t.is(tx.type, '0x2');
  // The signature recovers to the sender (a real signature, not the impersonation marker).
  t.is(ethers.Transaction.from(await rawOf(tx)).from?.toLowerCase(), accounts[3]);
  // A call through eth_sendTransaction with a legacy gas price.
  const h2 = await rpcOk(n.url, 'eth_sendTransaction', [
    { from: accounts[3], to: box, data: iface.encodeFunctionData('store', [9n]), gasPrice: '0x77359400' },
  ]);
  t.is((await rpcOk(n.url, 'eth_getTransactionByHash', [h2])).type, '0x0');
  t.is(BigInt(await rpcOk(n.url, 'eth_getStorageAt', [box, '0x0', 'latest'])), 9n);
  // A reverting call is refused with its reason, nothing is sent.
  const reverted = await rpc(n.url, 'eth_sendTransaction', [
    { from: accounts[3], to: box, data: iface.encodeFunctionData('fail') },
  ]);
  t.is(reverted.error?.code, 3);
  t.is(reverted.error?.message, 'execution reverted: Box: nope');
  const unknown = await rpc(n.url, 'eth_sendTransaction', [{ from: ethers.Wallet.createRandom().address, to: box }]);
  t.regex(unknown.error?.message ?? '', /unknown account/);

  const msg = '0x68656c6c6f';
  const s1 = await rpcOk(n.url, 'eth_sign', [accounts[1], msg]);
  t.is(ethers.verifyMessage(ethers.getBytes(msg), s1).toLowerCase(), accounts[1]);
  t.is(await rpcOk(n.url, 'personal_sign', [msg, accounts[1]]), s1);
  t.is(s1, await wallet(1).signMessage(ethers.getBytes(msg)));
  const domain = { name: 'Mail', version: '1', chainId: 7120, verifyingContract: box };
  const types = {
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  };
  const message = {
    from: { name: 'Cow', wallet: accounts[1] },
    to: { name: 'Bob', wallet: accounts[2] },
    contents: 'Hello, Bob!',
  };
  const typed = {
    domain,
    primaryType: 'Mail',
    message,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      ...types,
    },
  };
  const s2 = await rpcOk(n.url, 'eth_signTypedData_v4', [accounts[1], typed]);
  t.is(s2, await wallet(1).signTypedData(domain, types, message));
  // Hardhat sends the typed data as JSON text.
  t.is(await rpcOk(n.url, 'eth_signTypedData_v4', [accounts[1], JSON.stringify(typed)]), s2);
});

/** The raw signed bytes of a transaction from its JSON-RPC shape. */
async function rawOf(tx: any): Promise<string> {
  return ethers.Transaction.from({
    type: Number(tx.type),
    chainId: BigInt(tx.chainId),
    nonce: Number(tx.nonce),
    to: tx.to,
    data: tx.input,
    value: BigInt(tx.value),
    gasLimit: BigInt(tx.gas),
    maxFeePerGas: BigInt(tx.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas),
    accessList: tx.accessList,
    signature: { r: tx.r, s: ethers.toBeHex(BigInt(tx.s), 32), yParity: Number(tx.yParity) as 0 | 1 },
  }).serialized;
}

test('state writes: setBalance, setCode, setStorageAt, setNonce are visible at once, part of the next block, kept over a restart, and /chain/validate replays them', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const a = ethers.Wallet.createRandom().address.toLowerCase();
  const big = 123n * 10n ** 30n;
  t.true(await rpcOk(n.url, 'anvil_setBalance', [a, `0x${big.toString(16)}`]));
  t.is(BigInt(await rpcOk(n.url, 'eth_getBalance', [a, 'latest'])), big);
  const code = compiled('Box').deployedBytecode;
  t.true(await rpcOk(n.url, 'hardhat_setCode', [a, code]));
  t.is(await rpcOk(n.url, 'eth_getCode', [a, 'latest']), code);
  t.true(await rpcOk(n.url, 'hardhat_setStorageAt', [a, '0x0', ethers.toBeHex(42n, 32)]));
  t.is(BigInt(await rpcOk(n.url, 'eth_getStorageAt', [a, '0x0', 'latest'])), 42n);
  // The contract code runs against the written storage.
  t.is(BigInt(await rpcOk(n.url, 'eth_call', [{ to: a, data: iface.encodeFunctionData('value') }, 'latest'])), 42n);
  t.true(await rpcOk(n.url, 'anvil_setNonce', [a, '0x7']));
  t.is(await rpcOk(n.url, 'eth_getTransactionCount', [a, 'latest']), '0x7');
  // Bad input is refused and changes nothing.
  t.is((await rpc(n.url, 'hardhat_setStorageAt', [a, '0x0', '0x01'])).error?.code, -32602);
  t.is((await rpc(n.url, 'anvil_setBalance', ['0x12', '0x1'])).error?.code, -32602);

  // Restart before any block: the writes are still there (kept with the pending record).
  const dir = n.dataDir;
  await n.node.stop();
  const n2 = await startTestNode({ blockTimeMs: 0, dataDir: dir });
  t.teardown(() => n2.stop());
  t.is(BigInt(await rpcOk(n2.url, 'eth_getBalance', [a, 'latest'])), big);
  t.is(await rpcOk(n2.url, 'eth_getCode', [a, 'latest']), code);
  // The next block carries them: its state root covers them and replay re-applies them.
  await rpcOk(n2.url, 'evm_mine');
  t.true((await validate(n2)).valid);
  // Writes made over several blocks, mixed with transactions, replay the same way.
  await rpcOk(n2.url, 'hardhat_setBalance', [devKey(4).address, '0x1']);
  await rpcOk(n2.url, 'hardhat_setBalance', [devKey(4).address, `0x${(10n ** 20n).toString(16)}`]);
  const b = ethers.Wallet.createRandom().address;
  await rpcOk(n2.url, 'eth_sendRawTransaction', [await transfer(4, b, 10n, 0)]);
  t.is(BigInt(await rpcOk(n2.url, 'eth_getBalance', [b, 'latest'])), 10n);
  const v = await validate(n2);
  t.true(v.valid, JSON.stringify(v));
  // And a restart after they are in blocks opens on the same state.
  await n2.node.stop();
  const n3 = await startTestNode({ blockTimeMs: 0, dataDir: dir });
  t.teardown(() => n3.stop());
  t.is(BigInt(await rpcOk(n3.url, 'eth_getBalance', [a, 'latest'])), big);
  t.is(BigInt(await rpcOk(n3.url, 'eth_getBalance', [b, 'latest'])), 10n);
  t.true((await validate(n3)).valid);
});

test('impersonation: unsigned eth_sendTransaction from an impersonated address is mined and replays; not once stopped, never as a raw transaction', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const whale = ethers.Wallet.createRandom().address.toLowerCase();
  const to = ethers.Wallet.createRandom().address.toLowerCase();
  await rpcOk(n.url, 'hardhat_setBalance', [whale, '0x56bc75e2d63100000']);
  t.regex((await rpc(n.url, 'eth_sendTransaction', [{ from: whale, to, value: '0x1' }])).error?.message ?? '', /unknown account/);
  t.true(await rpcOk(n.url, 'hardhat_impersonateAccount', [whale]));
  const hash = await rpcOk(n.url, 'eth_sendTransaction', [{ from: whale, to, value: '0x2a' }]);
  const rc = await rpcOk(n.url, 'eth_getTransactionReceipt', [hash]);
  t.is(rc.status, '0x1');
  t.is(rc.from, whale);
  t.is(await rpcOk(n.url, 'eth_getBalance', [to, 'latest']), '0x2a');
  const tx = await rpcOk(n.url, 'eth_getTransactionByHash', [hash]);
  t.is(tx.from, whale);
  t.is(BigInt(tx.r), BigInt(whale));
  t.is(tx.s, '0x1');
  // The same bytes from outside the node are an invalid signature, also on the dev chain.
  await rpcOk(n.url, 'evm_setAutomine', [false]);
  const second = await rpcOk(n.url, 'eth_sendTransaction', [{ from: whale, to, value: '0x1' }]);
  const pendingRaw = await rawOf({ ...(await rpcOk(n.url, 'eth_getTransactionByHash', [second])), nonce: '0x2' });
  const outside = await rpc(n.url, 'eth_sendRawTransaction', [pendingRaw]);
  t.regex(outside.error?.message ?? '', /invalid signature|invalid sender|signature/i);
  await rpcOk(n.url, 'evm_setAutomine', [true]);
  t.true(await rpcOk(n.url, 'anvil_stopImpersonatingAccount', [whale]));
  t.regex((await rpc(n.url, 'eth_sendTransaction', [{ from: whale, to, value: '0x1' }])).error?.message ?? '', /unknown account/);
  t.is(await rpcOk(n.url, 'eth_getBalance', [to, 'latest']), '0x2b');
  const v = await validate(n);
  t.true(v.valid, JSON.stringify(v));
});

test('outside --dev the test controls do not exist (-32601) and eth_accounts is []', async (t) => {
  const n = await startTestNode({ network: 'testnet' });
  t.teardown(() => n.stop());
  for (const m of [
    'evm_mine',
    'evm_setAutomine',
    'anvil_setBalance',
    'hardhat_impersonateAccount',
    'eth_sendTransaction',
    'eth_sign',
    'personal_sign',
    'eth_signTypedData_v4',
  ]) {
    const r = await rpc(n.url, m, []);
    t.is(r.error?.code, -32601, m);
  }
  t.deepEqual(await rpcOk(n.url, 'eth_accounts'), []);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x0', queued: '0x0' });
  const modules = await rpcOk(n.url, 'rpc_modules');
  t.is(modules.evm, undefined);
  t.is(modules.anvil, undefined);
  t.is(
    await rpcOk(n.url, 'web3_clientVersion'),
    `native-node/v0.1.0/node-v${process.versions.node}/${process.platform}-${process.arch}`,
  );
});

test('--anvil-compat: web3_clientVersion starts with anvil/ for tools that accept only anvil or Hardhat nodes', async (t) => {
  const n = await startTestNode({ anvilCompat: true });
  t.teardown(() => n.stop());
  t.is(
    await rpcOk(n.url, 'web3_clientVersion'),
    `anvil/v0.1.0/native-node/v0.1.0/node-v${process.versions.node}/${process.platform}-${process.arch}`,
  );
  const modules = await rpcOk(n.url, 'rpc_modules');
  for (const m of ['evm', 'anvil', 'hardhat', 'personal']) t.is(modules[m], '1.0', m);
});
