/**
 * evm_snapshot / evm_revert and anvil_reset on the dev chain: after a revert every read (REST, JSON-RPC,
 * eth_getLogs, receipts, balances, the token, NFT and staking lists) answers as before the snapshot, filters
 * never report the removed blocks, new blocks build on the restored head, and /chain/validate passes, also
 * after a restart (the journal does not bring the removed transactions back).
 */
import test from 'ava';
import { ethers } from 'ethers';
import type { KeyPair } from '../../ts/ledger/keys.js';
import { collectionAddress } from '../../ts/ledger/nft/keys.js';
import { tokenContractAddress } from '../../ts/ledger/tokens/index.js';
import { type SignedTransaction, signTransaction } from '../../ts/ledger/transaction.js';
import { ZERO_ADDRESS } from '../../ts/ledger/units.js';
import { alice, bob, carol, dave, erin } from '../api/rest-fixture.js';
import { compiled } from '../helpers/contracts.js';
import { CHAIN_ID, devPrivateKey, rpc, rpcOk } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const token = compiled('Token');
const tokenIface = new ethers.Interface(token.abi);
const wallet = (i: number) => new ethers.Wallet(devPrivateKey(i));
/** The EVM sender of these tests (dev account 6; the REST keys are accounts 0-4). */
const EVM = 6;

/** Nonces tracked locally per sender (native and EVM share one sequence per account). */
class Nonces {
  private readonly next = new Map<string, number>();
  async of(n: TestNode, address: string): Promise<number> {
    const a = address.toLowerCase();
    if (!this.next.has(a)) this.next.set(a, Number(await rpcOk(n.url, 'eth_getTransactionCount', [a, 'pending'])));
    const v = this.next.get(a) as number;
    this.next.set(a, v + 1);
    return v;
  }
  forget(): void {
    this.next.clear();
  }
}

async function confirmed(n: TestNode, txid: string): Promise<void> {
  await waitFor(
    async () => (await httpJson(`${n.url}/transactions/${txid}`)).body?.status === 'confirmed' || null,
    30_000,
    `inclusion of ${txid}`,
  );
}

/** A native operation or transfer from `key`, submitted through POST /transactions and mined. */
async function native(n: TestNode, nonces: Nonces, key: KeyPair, op: Record<string, unknown> | null, fee = 10_000n) {
  const tx: SignedTransaction = signTransaction(
    {
      from: key.address,
      to: op ? ZERO_ADDRESS : bob.address,
      amount: op ? 0n : 12_345n,
      fee,
      nonce: BigInt(await nonces.of(n, key.address)),
      chain_id: CHAIN_ID,
      ...(op ? { data: JSON.stringify(op) } : {}),
    },
    key,
  );
  const r = await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: tx } });
  if (r.status !== 200) throw new Error(`POST /transactions: ${r.status} ${r.text}`);
  await confirmed(n, tx.txid);
  return { tx, nonce: tx.nonce };
}

/** An EVM transaction from dev account EVM (automine: mined when the send answers). */
async function evm(n: TestNode, nonces: Nonces, to: string | null, data: string): Promise<string> {
  const w = wallet(EVM);
  const raw = await w.signTransaction({
    type: 2,
    chainId: BigInt(CHAIN_ID),
    to,
    data,
    nonce: await nonces.of(n, w.address),
    gasLimit: 3_000_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const hash = await rpcOk<string>(n.url, 'eth_sendRawTransaction', [raw]);
  const rc = await rpcOk(n.url, 'eth_getTransactionReceipt', [hash]);
  if (rc?.status !== '0x1') throw new Error(`transaction ${hash} failed: ${JSON.stringify(rc)}`);
  return hash;
}

interface World {
  erc20: string;
  src20: string;
  nft: string;
  txids: string[];
  evmHashes: string[];
}

/** Activity of every kind: an ERC-20 with logs, an SRC-20 token, an NFT collection, a delegation, transfers. */
async function activity(n: TestNode, nonces: Nonces, world: Partial<World>, round: number): Promise<World> {
  const txids: string[] = [];
  const evmHashes: string[] = [];
  let erc20 = world.erc20;
  if (!erc20) {
    const deployer = wallet(EVM).address;
    const nonce = await nonces.of(n, deployer);
    const w = wallet(EVM);
    const raw = await w.signTransaction({
      type: 2,
      chainId: BigInt(CHAIN_ID),
      data: ethers.concat([token.bytecode, tokenIface.encodeDeploy(['Coin', 'CN', 10n ** 24n])]),
      nonce,
      gasLimit: 3_000_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const hash = await rpcOk<string>(n.url, 'eth_sendRawTransaction', [raw]);
    evmHashes.push(hash);
    erc20 = (await rpcOk(n.url, 'eth_getTransactionReceipt', [hash])).contractAddress as string;
  }
  for (const to of [bob.address, carol.address]) {
    evmHashes.push(await evm(n, nonces, erc20, tokenIface.encodeFunctionData('transfer', [to, 1000n * BigInt(round)])));
  }
  let src20 = world.src20;
  if (!src20) {
    const d = await native(
      n,
      nonces,
      alice,
      { Deploy: { name: `Gold${round}`, symbol: 'GLD', decimals: 2, supply: 1_000_000, max_supply: 0 } },
      100_000n,
    );
    src20 = tokenContractAddress(alice.address, d.nonce);
    txids.push(d.tx.txid);
  }
  txids.push((await native(n, nonces, alice, { Transfer: { contract: src20, to: carol.address, amount: 100 * round } })).tx.txid);
  let nft = world.nft;
  if (!nft) {
    const d = await native(
      n,
      nonces,
      carol,
      {
        DeployNft: {
          name: 'Gallery',
          symbol: 'GAL',
          max_supply: 100,
          royalty_bps: 0,
          royalty_recipient: carol.address,
          base_uri: 'https://nft.example/',
        },
      },
      100_000n,
    );
    nft = collectionAddress(carol.address, d.nonce);
    txids.push(d.tx.txid);
  }
  txids.push((await native(n, nonces, carol, { MintNft: { collection: nft, to: dave.address } })).tx.txid);
  txids.push((await native(n, nonces, dave, null)).tx.txid);
  if (!world.src20) {
    // A validator needs 15,000 coins of self-stake; dev accounts start with 10,000.
    await rpcOk(n.url, 'anvil_setBalance', [erin.address, `0x${(10n ** 23n).toString(16)}`]);
    const reg = { RegisterValidator: { name: 'Erin', stake: 1_500_000_000_000, commission_bps: 500 } };
    txids.push((await native(n, nonces, erin, reg)).tx.txid);
  }
  txids.push((await native(n, nonces, bob, { Delegate: { validator: erin.address, amount: 1_000 * round } })).tx.txid);
  return { erc20, src20, nft, txids, evmHashes };
}

/** Every read whose answer a revert must restore. */
async function reads(n: TestNode, w: World): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const get = async (path: string) => {
    const r = await httpJson(`${n.url}${path}`);
    out[`GET ${path}`] = { status: r.status, body: r.body };
  };
  const call = async (method: string, params: unknown[] = []) => {
    const r = await rpc(n.url, method, params);
    out[`${method} ${JSON.stringify(params)}`] = r.error ?? r.result;
  };
  const people = [alice, bob, carol, dave, erin].map((k) => k.address);
  people.push(wallet(EVM).address.toLowerCase(), wallet(8).address.toLowerCase());
  for (const a of people) {
    for (const p of ['balance', 'nonce', 'history', 'tokens']) await get(`/accounts/${a}/${p}`);
    await get(`/address/${a}/info`);
    await get(`/address/${a}/history`);
    await get(`/staking/delegations/${a}`);
    await call('eth_getBalance', [a, 'latest']);
    await call('eth_getTransactionCount', [a, 'latest']);
    await call('eth_call', [{ to: w.erc20, data: tokenIface.encodeFunctionData('balanceOf', [a]) }, 'latest']);
    await get(`/tokens/${w.src20}/balance/${a}`);
  }
  for (const p of [
    '/chain/info',
    '/blocks?limit=50',
    '/transactions?limit=50',
    '/accounts/top',
    '/richlist',
    '/tokens',
    `/tokens/${w.src20}`,
    `/tokens/${w.src20}/holders`,
    `/tokens/${w.src20}/transfers`,
    '/nft/collections',
    `/nft/collection/${w.nft}`,
    `/nft/token/${w.nft}/1`,
    `/nft/token/${w.nft}/1/history`,
    '/staking/validators',
    `/validators/${erin.address}/delegators`,
    '/stats/daily',
    '/mempool',
    '/epoch/current',
    '/epoch/history',
    '/validators',
    '/chain/performance',
    `/validators/${erin.address}/rewards`,
    `/validators/${erin.address}/blocks-over-time`,
    `/wallets/${alice.address}`,
  ]) {
    await get(p);
  }
  const head = Number(await rpcOk(n.url, 'eth_blockNumber'));
  await call('eth_blockNumber');
  await call('eth_getBlockByNumber', ['latest', true]);
  await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
  await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: w.erc20 }]);
  await call('eth_getCode', [w.erc20, 'latest']);
  await call('eth_getStorageAt', [w.erc20, '0x3', 'latest']);
  await call('txpool_content');
  for (const h of w.evmHashes) {
    await call('eth_getTransactionReceipt', [h]);
    await call('eth_getTransactionByHash', [h]);
  }
  for (const id of w.txids) await get(`/transactions/${id}`);
  for (let h = 0; h <= head; h++) await call('eth_getBlockByNumber', [`0x${h.toString(16)}`, false]);
  return out;
}

const validate = async (n: TestNode) => (await httpJson(`${n.url}/chain/validate`)).body;

test('evm_revert: every read is as before the snapshot; filters never report removed blocks; new blocks build; valid after a restart', async (t) => {
  t.timeout(240_000);
  const dir = tempDir('native-dev-snapshot-');
  t.teardown(dir.cleanup);
  let n = await startTestNode({ blockTimeMs: 0, dataDir: dir.dir });
  t.teardown(() => n.stop());
  const nonces = new Nonces();
  const world = await activity(n, nonces, {}, 1);
  const before = await reads(n, world);
  const head = Number(await rpcOk(n.url, 'eth_blockNumber'));

  const id = await rpcOk<string>(n.url, 'evm_snapshot');
  t.regex(id, /^0x[0-9a-f]+$/);
  // Filters installed at the snapshot, not polled until after the revert.
  const logFilter = await rpcOk<string>(n.url, 'eth_newFilter', [{ fromBlock: 'latest' }]);
  const blockFilter = await rpcOk<string>(n.url, 'eth_newBlockFilter');

  // The future the revert removes: more of everything, a dev write, a contract, a later snapshot.
  const later = await activity(n, nonces, world, 2);
  await rpcOk(n.url, 'anvil_setBalance', [wallet(8).address, '0x1234']);
  const second = await rpcOk<string>(n.url, 'evm_snapshot');
  const extra = await activity(n, nonces, { ...world, erc20: undefined }, 3);
  t.true(Number(await rpcOk(n.url, 'eth_blockNumber')) > head + 10);
  t.notDeepEqual(await reads(n, world), before);

  t.true(await rpcOk(n.url, 'evm_revert', [id]));
  nonces.forget();
  t.is(Number(await rpcOk(n.url, 'eth_blockNumber')), head);
  t.deepEqual(await reads(n, world), before);
  // Used up: the snapshot reverted to and every later one (Hardhat's and anvil's rule).
  t.false(await rpcOk(n.url, 'evm_revert', [id]));
  t.false(await rpcOk(n.url, 'evm_revert', [second]));
  // The removed blocks' transactions and contracts are gone from every index.
  for (const h of [...later.evmHashes, ...extra.evmHashes]) {
    t.is(await rpcOk(n.url, 'eth_getTransactionReceipt', [h]), null);
    t.is(await rpcOk(n.url, 'eth_getTransactionByHash', [h]), null);
  }
  for (const txid of [...later.txids, ...extra.txids]) t.is((await httpJson(`${n.url}/transactions/${txid}`)).status, 404);
  t.is(await rpcOk(n.url, 'eth_getCode', [extra.erc20, 'latest']), '0x');
  t.is(await rpcOk(n.url, 'eth_getBlockByNumber', [`0x${(head + 1).toString(16)}`, false]), null);
  // Nothing of the removed blocks reaches a filter.
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [logFilter]), []);
  t.deepEqual(await rpcOk(n.url, 'eth_getFilterChanges', [blockFilter]), []);

  // New blocks build on the restored head; filters see them.
  const fresh = await activity(n, nonces, world, 4);
  const newHead = Number(await rpcOk(n.url, 'eth_blockNumber'));
  t.true(newHead > head);
  const hashes = await rpcOk<string[]>(n.url, 'eth_getFilterChanges', [blockFilter]);
  t.is(hashes.length, newHead - head);
  t.is(hashes[0], (await rpcOk(n.url, 'eth_getBlockByNumber', [`0x${(head + 1).toString(16)}`, false])).hash);
  const logs = await rpcOk<any[]>(n.url, 'eth_getFilterChanges', [logFilter]);
  t.deepEqual(
    logs.map((l) => l.transactionHash),
    fresh.evmHashes,
  );
  t.true((await validate(n)).valid);

  // A restart: the chain replays, and the journal does not bring back the removed transactions.
  const after = await reads(n, world);
  await n.stop();
  n = await startTestNode({ blockTimeMs: 0, dataDir: dir.dir });
  t.deepEqual(await reads(n, world), after);
  t.true((await validate(n)).valid);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x0', queued: '0x0' });
  for (const h of later.evmHashes) t.is(await rpcOk(n.url, 'eth_getTransactionByHash', [h]), null);
  nonces.forget();
  await activity(n, nonces, world, 5);
  t.true((await validate(n)).valid);
});
