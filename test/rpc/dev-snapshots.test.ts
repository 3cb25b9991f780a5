/**
 * evm_snapshot / evm_revert and anvil_reset on the dev chain: after a revert every read (REST, JSON-RPC,
 * eth_getLogs, receipts, balances, the token, NFT and staking lists) answers as before the snapshot, filters
 * never report the removed blocks, new blocks build on the restored head, and /chain/validate passes, also
 * after a restart (the journal does not bring the removed transactions back).
 */
import test from 'ava';
import { ethers } from 'ethers';
import { tokenContractAddress, collectionAddress } from '../../ts/modules/index.js';
import { type KeyPair, type SignedTransaction, signTransaction, ZERO_ADDRESS } from '../../ts/ledger/index.js';
import { ChainSubscription, ResumableSubscription, type SubscriptionItem } from '../../ts/events/index.js';
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

/** A signed EIP-1559 transfer of 1 wei from dev account i. */
function transfer(i: number, nonce: number, to = ethers.Wallet.createRandom().address): Promise<string> {
  return wallet(i).signTransaction({
    type: 2,
    chainId: BigInt(CHAIN_ID),
    to,
    value: 1n,
    nonce,
    gasLimit: 21_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

const headOf = async (n: TestNode) => Number(await rpcOk(n.url, 'eth_blockNumber'));

test('a snapshot restores the pending pool, the state writes, the clock and the mining mode; snapshots nest', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const dev = n.node.ctx.dev;
  if (!dev) return t.fail('no dev chain');
  const x = ethers.Wallet.createRandom().address.toLowerCase();
  t.true(await rpcOk(n.url, 'evm_setAutomine', [false]));
  const pendingHash = await rpcOk<string>(n.url, 'eth_sendRawTransaction', [await transfer(7, 0)]);
  await rpcOk(n.url, 'anvil_setBalance', [x, '0x5']);
  t.is(await rpcOk(n.url, 'evm_increaseTime', [1000]), '1000');
  const head = await headOf(n);
  const id = await rpcOk<string>(n.url, 'evm_snapshot');

  // Everything moves on: the pending transaction is mined, the write replaced, time and mode changed.
  await rpcOk(n.url, 'evm_mine');
  await rpcOk(n.url, 'anvil_setBalance', [x, '0x7']);
  await rpcOk(n.url, 'evm_increaseTime', [5000]);
  await rpcOk(n.url, 'evm_setIntervalMining', [60_000]);
  t.true(await rpcOk(n.url, 'evm_setAutomine', [true]));
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(7, 1)]);
  t.is(await headOf(n), head + 2);

  t.true(await rpcOk(n.url, 'evm_revert', [id]));
  t.is(await headOf(n), head);
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x1', queued: '0x0' });
  t.is((await rpcOk(n.url, 'eth_getTransactionByHash', [pendingHash])).blockNumber, null);
  t.is(await rpcOk(n.url, 'eth_getBalance', [x, 'latest']), '0x5');
  t.is(await rpcOk(n.url, 'evm_increaseTime', [0]), '1000');
  t.false(await rpcOk(n.url, 'hardhat_getAutomine'));
  t.is(dev.miner.intervalMs, 0);
  // The restored pool and write go into the next block as they would have.
  await rpcOk(n.url, 'evm_mine');
  t.is(Number((await rpcOk(n.url, 'eth_getTransactionReceipt', [pendingHash])).blockNumber), head + 1);
  t.is(await rpcOk(n.url, 'eth_getBalance', [x, 'latest']), '0x5');

  // Nested snapshots: reverting to the inner one keeps the outer one; reverting to the outer uses up both.
  const outer = await rpcOk<string>(n.url, 'evm_snapshot');
  await rpcOk(n.url, 'evm_mine');
  const inner = await rpcOk<string>(n.url, 'evm_snapshot');
  await rpcOk(n.url, 'evm_mine');
  t.true(await rpcOk(n.url, 'evm_revert', [inner]));
  t.is(await headOf(n), head + 2);
  const third = await rpcOk<string>(n.url, 'anvil_snapshot');
  t.true(BigInt(third) > BigInt(inner));
  t.true(await rpcOk(n.url, 'anvil_revert', [outer]));
  t.is(await headOf(n), head + 1);
  t.false(await rpcOk(n.url, 'evm_revert', [third]));
  t.false(await rpcOk(n.url, 'evm_revert', ['0x999']));
  t.is((await rpc(n.url, 'evm_revert', ['nope'])).error?.code, -32602);
  t.true((await validate(n)).valid);
});

test('anvil_reset / hardhat_reset: back to genesis with an empty pool, no writes, snapshots or impersonations, the start mode', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const accounts = await rpcOk<string[]>(n.url, 'eth_accounts');
  const genesis = await Promise.all(accounts.map((a) => rpcOk(n.url, 'eth_getBalance', [a, '0x0'])));
  const genesisBlock = await rpcOk(n.url, 'eth_getBlockByNumber', ['0x0', false]);
  const stranger = ethers.Wallet.createRandom().address.toLowerCase();
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(1, 0)]);
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(1, 1)]);
  const id = await rpcOk<string>(n.url, 'evm_snapshot');
  await rpcOk(n.url, 'anvil_impersonateAccount', [stranger]);
  await rpcOk(n.url, 'anvil_setBalance', [stranger, '0xde0b6b3a7640000']);
  await rpcOk(n.url, 'evm_increaseTime', [86_400]);
  t.true(await rpcOk(n.url, 'evm_setAutomine', [false]));
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(1, 2)]);
  t.is((await rpc(n.url, 'hardhat_reset', [{ forking: { jsonRpcUrl: 'http://127.0.0.1:1' } }])).error?.code, -32602);

  t.is(await rpcOk(n.url, 'anvil_reset'), null);
  t.is(await headOf(n), 0);
  t.deepEqual(await rpcOk(n.url, 'eth_getBlockByNumber', ['latest', false]), genesisBlock);
  t.deepEqual(await Promise.all(accounts.map((a) => rpcOk(n.url, 'eth_getBalance', [a, 'latest']))), genesis);
  t.is(await rpcOk(n.url, 'eth_getBalance', [stranger, 'latest']), '0x0');
  t.deepEqual(await rpcOk(n.url, 'txpool_status'), { pending: '0x0', queued: '0x0' });
  t.is(await rpcOk(n.url, 'evm_increaseTime', [0]), '0');
  t.true(await rpcOk(n.url, 'hardhat_getAutomine'));
  t.false(await rpcOk(n.url, 'evm_revert', [id]));
  t.regex((await rpc(n.url, 'eth_sendTransaction', [{ from: stranger, to: stranger }])).error?.message ?? '', /unknown account/);
  t.deepEqual((await httpJson(`${n.url}/transactions?limit=10`)).body.transactions ?? [], []);

  // The chain goes on from genesis, and hardhat_reset does the same.
  await rpcOk(n.url, 'eth_sendRawTransaction', [await transfer(1, 0)]);
  t.is(await headOf(n), 1);
  t.true((await validate(n)).valid);
  t.true(await rpcOk(n.url, 'hardhat_reset', [{}]));
  t.is(await headOf(n), 0);
  t.true((await validate(n)).valid);
});

test('event consumers follow a rollback: queued events of removed blocks are dropped; a resumed stream gets the new blocks', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const { ctx } = n.node;
  const feed = ctx.events;
  if (!feed) return t.fail('no event feed');
  const blocks = (items: SubscriptionItem[]) =>
    items.flatMap((i) => ('event' in i && i.event.kind === 'block_finalized' ? [i.event.block] : []));
  const drain = (sub: ChainSubscription) => {
    const out: SubscriptionItem[] = [];
    for (let i = sub.poll(); i; i = sub.poll()) out.push(i);
    return out;
  };
  const head = await headOf(n);
  const id = await rpcOk<string>(n.url, 'evm_snapshot');
  const queued = new ChainSubscription(feed, 100, new Set(['block_finalized']));
  t.teardown(() => queued.close());
  await rpcOk(n.url, 'hardhat_mine', ['0x3']);
  // A stream resumed from block 1 replays up to the head (head + 3) and goes live after it.
  const resumed = new ResumableSubscription({ chain: ctx.chain, events: feed }, { fromHeight: 1, maxQueued: 100 });
  t.teardown(() => resumed.close());
  const replayed: SubscriptionItem[] = [];
  while (blocks(replayed).at(-1)?.index !== head + 3) replayed.push(...((await resumed.take(100)) ?? []));

  t.true(await rpcOk(n.url, 'evm_revert', [id]));
  await rpcOk(n.url, 'evm_mine');
  const fresh = await rpcOk(n.url, 'eth_getBlockByNumber', [`0x${(head + 1).toString(16)}`, false]);
  // The subscription that never polled sees only the new block; the stream continues at head + 1.
  t.deepEqual(
    blocks(drain(queued)).map((b) => `0x${b.hash}`),
    [fresh.hash],
  );
  const next = blocks((await resumed.take(100)) ?? []);
  t.deepEqual(
    next.map((b) => [b.index, `0x${b.hash}`]),
    [[head + 1, fresh.hash]],
  );
});
