import test, { type ExecutionContext } from 'ava';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { writeGenesisFile } from '../../ts/chain/index.js';
import { randomKeyPair, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, ethersWallet, rpc, rpcOk, sendNative, signCall, waitReceipt } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** A data dir with a genesis file (`--genesis`) whose EVM activates at `evm`; dev account 0 funded. */
function genesisDir(t: ExecutionContext, evm: number): { dataDir: string; genesisFile: string } {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const v = randomKeyPair();
  saveValidatorKey(tmp.dir, v);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, {
    network: 'testnet',
    chainId: 7120,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: { dposBft: 0, evm, rewardV2: 0, tokenomicsV2: 0, nft: evm },
    validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v' }],
    alloc: new Map([[devKey(0).address, 10_000n * BASE_PER_COIN]]),
    evmHardfork: 'prague',
    epochLength: 3600,
  });
  return { dataDir: tmp.dir, genesisFile };
}

/** A node on such a data dir, stopped when the test ends (or earlier by `stop`, once). */
async function startOn(
  t: ExecutionContext,
  dir: { dataDir: string; genesisFile: string },
  blockTimeMs: number,
): Promise<TestNode> {
  const n = await startTestNode({ ...dir, blockTimeMs });
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= n.stop();
    return stopped;
  };
  t.teardown(stop);
  return { ...n, stop };
}

/** A node on a genesis file (`--genesis`) whose EVM activates at `evm`; dev account 0 funded. */
const genesisNode = (t: ExecutionContext, evm: number, blockTimeMs = 200) => startOn(t, genesisDir(t, evm), blockTimeMs);

const NOT_ACTIVE = { code: -32000, message: 'EVM not active yet' };

test('before the EVM activation height: eth_sendRawTransaction, eth_call and the other EVM methods answer -32000', async (t) => {
  const n = await genesisNode(t, 1_000_000);
  const w = ethersWallet(n.url, 0);
  t.teardown(() => w.provider?.destroy());
  const raw = await w.signTransaction({
    type: 2,
    chainId: 7120n,
    nonce: 0,
    data: compiled('Box').bytecode + ethers.toBeHex(1n, 32).slice(2),
    gasLimit: 1_000_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  t.deepEqual((await rpc(n.url, 'eth_sendRawTransaction', [raw])).error, NOT_ACTIVE);
  const a = devKey(0).address;
  t.deepEqual((await rpc(n.url, 'eth_call', [{ to: a, data: '0x' }, 'latest'])).error, NOT_ACTIVE);
  for (const [method, params] of [
    ['eth_estimateGas', [{ from: a, to: devKey(1).address, value: '0x1' }]],
    ['eth_getCode', [a, 'latest']],
    ['eth_getStorageAt', [a, '0x0', 'latest']],
    ['eth_getTransactionReceipt', [ethers.ZeroHash]],
    ['eth_getBlockReceipts', ['latest']],
    ['eth_getLogs', [{}]],
  ] as const) {
    t.deepEqual((await rpc(n.url, method, [...params])).error, NOT_ACTIVE, method);
  }
  // Nothing entered the pool; the non-EVM methods and native transfers work.
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
  t.is(await rpcOk(n.url, 'eth_chainId'), '0x1bd0');
  t.is(BigInt(await rpcOk(n.url, 'eth_getBalance', [a, 'latest'])), 10_000n * 10n ** 18n);
  const txid = await sendNative(n.url, devKey(0), devKey(1).address, 5_000n, 0n);
  await waitFor(async () => (await httpJson(`${n.url}/transactions/${txid}`)).body?.status === 'confirmed', 15_000, 'transfer');
  t.is((await httpJson(`${n.url}/accounts/${devKey(1).address}/balance`)).body.balance, 5_000);
});

test('at the EVM activation height the gate opens: calls answer, a contract deploys in a block >= the height', async (t) => {
  const ACTIVATION = 20;
  const dir = genesisDir(t, ACTIVATION);
  // First with a block a minute: the head stays far below the activation height while the closed gate is
  // checked, however slow the machine. Then the same chain with 100 ms blocks, up to and past it.
  const slow = await startOn(t, dir, 60_000);
  // One batch, served in order: the call is refused while the next block is below the activation height.
  const r = await httpJson(`${slow.url}/rpc`, {
    method: 'POST',
    json: [
      { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: devKey(1).address }, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ],
  });
  const [call, head] = r.body as { result?: string; error?: unknown }[];
  t.true(Number(head.result) + 1 < ACTIVATION, `head ${head.result}`);
  t.deepEqual(call.error, NOT_ACTIVE);
  await slow.stop();
  const n = await startOn(t, dir, 100);

  await waitFor(
    async () => (await rpc(n.url, 'eth_call', [{ to: devKey(1).address }, 'latest'])).result === '0x',
    30_000,
    'EVM active',
  );
  t.true(Number(await rpcOk(n.url, 'eth_blockNumber')) + 1 >= ACTIVATION);
  const w = ethersWallet(n.url, 0);
  t.teardown(() => w.provider?.destroy());
  const hash = await rpcOk(n.url, 'eth_sendRawTransaction', [
    await signCall(w, null, compiled('Box').bytecode + ethers.toBeHex(5n, 32).slice(2), 0, 1_000_000n),
  ]);
  const rc = await waitReceipt(n.url, hash);
  t.is(rc.status, '0x1');
  t.true(Number(rc.blockNumber) >= ACTIVATION);
  t.is(await rpcOk(n.url, 'eth_getCode', [rc.contractAddress, 'latest']), compiled('Box').deployedBytecode);
});
