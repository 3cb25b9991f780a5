/**
 * The dev chain as a Hardhat test suite sees it (issue 28, section 5): calls at `latest` on the head's header,
 * strictly increasing block timestamps, impersonated contracts as senders, an automine send that is not mined
 * answers an error, exact estimates on --dev. Through ethers, as a suite calls the node.
 */
import { join } from 'node:path';
import test from 'ava';
import { ethers } from 'ethers';
import { writeGenesisFile } from '../../ts/chain/index.js';
import { parseConfig } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, ethersProvider, ethersWallet, rejection, rpc, rpcOk } from '../helpers/evm.js';
import { TEST_NODE_ENV, type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { freeBasePort } from '../helpers/devnet.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** Init code returning NUMBER (as a 32-byte word); TIMESTAMP likewise. */
const RETURN_NUMBER = '0x435f5260205ff3';
const RETURN_TIMESTAMP = '0x425f5260205ff3';
/** Init code that reverts unless NUMBER is 3. */
const REVERT_UNLESS_BLOCK_3 = '0x43600314600a575f5ffd5b00';

const automine = () => startTestNode({ blockTimeMs: 0 });
const head = async (n: TestNode) => rpcOk(n.url, 'eth_getBlockByNumber', ['latest', false]);

test('eth_call and eth_estimateGas at latest run on the head block header; pending on head + 1', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  await rpcOk(n.url, 'hardhat_mine', ['0x3']);
  t.is(await provider.getBlockNumber(), 3);
  t.is(BigInt(await provider.call({ data: RETURN_NUMBER })), 3n);
  t.is(BigInt(await provider.call({ data: RETURN_NUMBER, blockTag: 'latest' })), 3n);
  t.is(BigInt(await provider.call({ data: RETURN_NUMBER, blockTag: 'pending' })), 4n);
  // A past block runs on its own header, as geth, Hardhat and anvil do.
  t.is(BigInt(await provider.call({ data: RETURN_NUMBER, blockTag: 1 })), 1n);
  const latest = await head(n);
  t.is(BigInt(await provider.call({ data: RETURN_TIMESTAMP })), BigInt(latest.timestamp));
  // The estimate sees the same environment: a call that needs NUMBER == 3 succeeds at latest, reverts at pending.
  const from = devKey(1).address;
  t.true((await provider.estimateGas({ from, data: REVERT_UNLESS_BLOCK_3 })) > 21_000n);
  t.is((await rpc(n.url, 'eth_estimateGas', [{ from, data: REVERT_UNLESS_BLOCK_3 }, 'pending'])).error?.code, 3);
});

test('consecutive blocks have strictly increasing timestamps, also after evm_setNextBlockTimestamp and a mine', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 2);
  const to = devKey(3).address;
  const stamps: number[] = [];
  for (let i = 0; i < 3; i++) {
    const receipt = await (await w.sendTransaction({ to, value: 1n })).wait();
    stamps.push((await w.provider?.getBlock(receipt?.blockNumber ?? -1))?.timestamp ?? -1);
  }
  t.true(stamps[1] > stamps[0] && stamps[2] > stamps[1], stamps.join(','));
  const target = Number((await head(n)).timestamp) + 50;
  await rpcOk(n.url, 'evm_setNextBlockTimestamp', [target]);
  await rpcOk(n.url, 'evm_mine');
  t.is(Number((await head(n)).timestamp), target);
  await rpcOk(n.url, 'evm_mine');
  t.true(Number((await head(n)).timestamp) > target);
  // The head's own timestamp is refused for the next block, as Hardhat refuses it.
  const same = await rpc(n.url, 'evm_setNextBlockTimestamp', [Number((await head(n)).timestamp)]);
  t.is(same.error?.code, -32000);
  t.true((await rpcOk(n.url, 'eth_getBlockByNumber', ['latest', false])) !== null);
});

test('an impersonated account with code sends (EIP-3607 skipped for impersonation), through ethers', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  const deployer = ethersWallet(n.url, 4, provider);
  const box = compiled('Box');
  const contract = await new ethers.ContractFactory(box.abi, box.bytecode, deployer).deploy(1n);
  await contract.waitForDeployment();
  const address = await contract.getAddress();
  const code = await provider.getCode(address);
  await rpcOk(n.url, 'hardhat_setBalance', [address, ethers.toQuantity(ethers.parseEther('10'))]);
  await rpcOk(n.url, 'hardhat_impersonateAccount', [address]);
  // The balance write in a block of its own: tracing a transaction in the block of a state write is section 1's.
  await rpcOk(n.url, 'evm_mine');
  // What hardhat-ethers' getImpersonatedSigner builds: a JSON-RPC signer for an address the node does not list.
  const signer = new ethers.JsonRpcSigner(provider, address);
  const to = devKey(5).address;
  const before = await provider.getBalance(to);
  const tx = await signer.sendTransaction({ to, value: 7n });
  const receipt = await tx.wait();
  t.is(receipt?.status, 1);
  t.is(await provider.getBalance(to), before + 7n);
  t.is(await provider.getCode(address), code);
  t.not(await provider.getTransaction(tx.hash), null);
  t.true((await rpcOk(n.url, 'eth_getBlockByNumber', ['latest', false])).transactions.includes(tx.hash));
  // Tracing and replay treat it as the block did.
  const trace = await rpcOk(n.url, 'debug_traceTransaction', [tx.hash, { tracer: 'callTracer' }]);
  t.is(trace.from, address.toLowerCase());
  t.is(trace.value, '0x7');
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
});

test('an automine send that does not make it into its block answers an error, never a hash', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  const w = ethersWallet(n.url, 6, provider);
  // A signed transaction from an account that has code (and is not impersonated): EIP-3607 refuses it in the block.
  await rpcOk(n.url, 'hardhat_setCode', [w.address, '0x00']);
  const before = await provider.getBlockNumber();
  const raw = await w.signTransaction({
    type: 2,
    chainId: 7120n,
    to: devKey(7).address,
    value: 1n,
    nonce: 0,
    gasLimit: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const err = await rejection(provider.broadcastTransaction(raw));
  t.regex(String(err.message), /EIP-3607|not EOA/);
  t.is(await provider.getTransaction(ethers.keccak256(raw)), null);
  t.true((await provider.getBlockNumber()) >= before);
  t.is(await provider.getTransactionCount(w.address, 'pending'), 0);
});

test('eth_estimateGas on --dev is the exact estimate (no 100000 floor for calls with data)', async (t) => {
  const n = await automine();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  const w = ethersWallet(n.url, 8, provider);
  const box = compiled('Box');
  const contract = new ethers.Contract(
    await (await new ethers.ContractFactory(box.abi, box.bytecode, w).deploy(1n)).getAddress(),
    box.abi,
    w,
  );
  const to = devKey(9).address;
  t.is(await provider.estimateGas({ from: w.address, to, data: '0x12' }), 21_016n);
  const gas = await contract.store.estimateGas(5n);
  t.true(gas < 100_000n && gas > 21_000n, String(gas));
  // The estimate is enough: the write succeeds with exactly that limit.
  const receipt = await (await contract.store(5n, { gasLimit: gas })).wait();
  t.is(receipt?.status, 1);
  t.is(await contract.get(), 5n);
});

test('eth_estimateGas keeps the spec floor (100000 with data) on a testnet chain', async (t) => {
  const tmp = tempDir();
  t.teardown(() => tmp.cleanup());
  const genesisFile = join(tmp.dir, 'genesis.json');
  const from = devKey(1);
  writeGenesisFile(genesisFile, {
    network: 'testnet',
    chainId: 7120,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: { dposBft: 10, evm: 0, rewardV2: 10, tokenomicsV2: 10, nft: 10 },
    validators: [{ address: devKey(0).address, public_key: toHex(devKey(0).publicKey), name: 'v0' }],
    alloc: new Map([[from.address, 1_000_000_000_000n]]),
    evmHardfork: 'prague',
    epochLength: 3600,
  });
  const n = await startTestNode({
    ...parseConfig(['--network', 'testnet'], TEST_NODE_ENV),
    genesisFile,
    apiPort: 0,
    rpcEvmTimeoutMs: 30_000,
  });
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.is(await provider.estimateGas({ from: from.address, to: devKey(2).address, value: 1n }), 21_000n);
  t.is(await provider.estimateGas({ from: from.address, to: devKey(2).address, data: '0x12' }), 100_000n);
});

test('writes sent the moment the dev chain answers /health are kept: the start-up warm-up never reverts the chain', async (t) => {
  const port = await freeBasePort(1);
  const url = `http://127.0.0.1:${port}`;
  const starting = startTestNode({ blockTimeMs: 0, apiPort: port });
  t.teardown(async () => (await starting).stop());
  await waitFor(async () => (await fetch(`${url}/health`)).ok, 60_000, '/health');
  // A test runner starting right after the node: a state write and a send, at once.
  const target = devKey(7).address;
  t.true(await rpcOk(url, 'hardhat_setCode', [target, '0x6001600055']));
  const w = ethersWallet(url, 2);
  const receipt = await (await w.sendTransaction({ to: devKey(3).address, value: 5n })).wait();
  t.is(receipt?.status, 1);
  const n = await starting;
  // It ran to its end, on a scratch chain of its own.
  t.true(await n.node.devWarmUp);
  // Whatever the warm-up did meanwhile, what the client was told succeeded is still there.
  t.is(await rpcOk(url, 'eth_getCode', [target, 'latest']), '0x6001600055');
  t.is(await w.provider?.getTransactionCount(w.address, 'latest'), 1);
  t.not(await rpcOk(url, 'eth_getTransactionReceipt', [receipt?.hash]), null);
  const next = await (await w.sendTransaction({ to: devKey(3).address, value: 5n })).wait();
  t.is(next?.status, 1);
});
