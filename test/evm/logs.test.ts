import test from 'ava';
import { join } from 'node:path';
import { ethers } from 'ethers';
import {
  EMPTY_BLOOM_HEX,
  type Block,
  blockHash,
  txMerkleRoot,
  Chain,
  PRESET_ACTIVATION,
  writeGenesisFile,
} from '../../ts/chain/index.js';
import { randomKeyPair, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { toHex } from '../../ts/util/index.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, ethersProvider, ethersWallet, rpc, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const iface = new ethers.Interface(compiled('Box').abi);
const STORED = iface.getEvent('Stored')!.topicHash;
const PINGED = iface.getEvent('Pinged')!.topicHash;
const word = (v: bigint | string): string => ethers.zeroPadValue(typeof v === 'bigint' ? ethers.toBeHex(v) : v, 32);
const TAG_X = ethers.id('x');
const TAG_Y = ethers.id('y');

/** Sign a Box method call (EIP-1559, explicit nonce and gas: no round trips). */
const signBox = (w: ethers.Wallet, to: string, method: string, args: unknown[], nonce: number): Promise<string> =>
  signCall(w, to, iface.encodeFunctionData(method, args), nonce);

/** Submit raw transactions in one JSON-RPC batch (processed in order: usually one block). */
async function sendBatch(url: string, raws: string[]): Promise<string[]> {
  const r = await httpJson(`${url}/rpc`, {
    method: 'POST',
    json: raws.map((raw, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] })),
  });
  return (r.body as { result?: string; error?: unknown }[]).map((x) => {
    if (!x.result) throw new Error(`sendRawTransaction: ${JSON.stringify(x.error)}`);
    return x.result;
  });
}

async function deploy(w: ethers.Wallet, url: string): Promise<{ address: string; block: number }> {
  const { abi, bytecode } = compiled('Box');
  const tx = await new ethers.ContractFactory(abi, bytecode, w).getDeployTransaction(0n);
  const sent = await w.sendTransaction(tx);
  const rc = await waitReceipt(url, sent.hash);
  return { address: rc.contractAddress, block: Number(rc.blockNumber) };
}

const getLogs = (url: string, filter: Record<string, unknown>) => rpc<any[]>(url, 'eth_getLogs', [filter]);
const logsOk = (url: string, filter: Record<string, unknown>) => rpcOk<any[]>(url, 'eth_getLogs', [filter]);
const key = (l: any) => [Number(l.blockNumber), Number(l.transactionIndex), Number(l.logIndex)];

test('eth_getLogs: address OR, topic slots with null/OR/AND, tags, blockHash, ordering, block-level log indexes', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const [w0, w1] = [ethersWallet(n.url, 0, provider), ethersWallet(n.url, 1, provider)];
  const [a, b] = await Promise.all([deploy(w0, n.url), deploy(w1, n.url)]);
  const from = Math.min(a.block, b.block);
  const hashes = await sendBatch(n.url, [
    await signBox(w0, a.address, 'store', [1n], 1),
    await signBox(w0, a.address, 'storeAndPing', [2n, TAG_X], 2),
    await signBox(w1, b.address, 'store', [3n], 1),
    await signBox(w1, b.address, 'storeAndPing', [4n, TAG_Y], 2),
  ]);
  const receipts = await Promise.all(hashes.map((h) => waitReceipt(n.url, h)));
  const last = (await waitReceipt(n.url, (await sendBatch(n.url, [await signBox(w0, a.address, 'store', [5n], 3)]))[0]))
    .blockNumber;
  const range = { fromBlock: ethers.toQuantity(from), toBlock: last };

  // Every log of the range, in order: block, transaction index, log index; log indexes count per block from 0.
  const all = await logsOk(n.url, range);
  t.is(all.length, 7);
  const sorted = [...all].sort((x, y) => {
    const [p, q] = [key(x), key(y)];
    return p[0] - q[0] || p[1] - q[1] || p[2] - q[2];
  });
  t.deepEqual(all, sorted);
  const perBlock = new Map<number, number[]>();
  for (const l of all) perBlock.set(Number(l.blockNumber), [...(perBlock.get(Number(l.blockNumber)) ?? []), Number(l.logIndex)]);
  for (const idx of perBlock.values()) t.deepEqual(idx, [...idx.keys()]);
  for (const l of all) {
    const rc = receipts.find((r) => r.transactionHash === l.transactionHash);
    if (rc) t.true(rc.logs.some((x: any) => x.logIndex === l.logIndex && x.blockHash === l.blockHash && x.data === l.data));
    t.false(l.removed);
  }

  // address: one, or an array (OR); case-insensitive.
  t.is((await logsOk(n.url, { ...range, address: a.address })).length, 4);
  t.is((await logsOk(n.url, { ...range, address: b.address.toUpperCase().replace('0X', '0x') })).length, 3);
  t.is((await logsOk(n.url, { ...range, address: [a.address, b.address] })).length, 7);
  t.deepEqual(await logsOk(n.url, { ...range, address: [ethers.ZeroAddress] }), []);

  // topics: null = any, array = OR within a slot, AND across slots, up to 4 slots.
  const topics = async (ts: unknown[], address?: unknown) => (await logsOk(n.url, { ...range, topics: ts, address })).length;
  t.is(await topics([STORED]), 5);
  t.is(await topics([PINGED]), 2);
  t.is(await topics([[STORED, PINGED]]), 7);
  t.is(await topics([[]]), 7, 'an empty OR list matches anything');
  t.is(await topics([null, word(w1.address)]), 3);
  t.is(await topics([STORED, word(w0.address)]), 3);
  t.is(await topics([STORED, word(w1.address)], a.address), 0);
  t.is(await topics([STORED, null, [word(2n), word(4n)]]), 2);
  t.is(await topics([PINGED, null, TAG_Y]), 1);
  t.is(await topics([null, null, [TAG_X, word(5n)]]), 2);
  t.is(await topics([STORED, null, null]), 5);
  // As geth and Hardhat: a log with fewer topics than the filter has slots never matches, nulls included.
  t.is(await topics([STORED, null, null, null]), 0);
  t.is(await topics([STORED, null, null, word(1n)]), 0, 'a slot beyond the log topics never matches');

  // Tags: earliest = 0; latest, pending, safe and finalized = the head (PoA: final on commit).
  for (const tag of ['latest', 'pending', 'safe', 'finalized']) {
    t.is((await logsOk(n.url, { fromBlock: 'earliest', toBlock: tag, address: a.address })).length, 4, tag);
  }
  t.is((await logsOk(n.url, { fromBlock: 'earliest', address: [a.address, b.address] })).length, 7, 'toBlock defaults to latest');

  // blockHash: exactly that block's logs.
  const h = receipts[3].blockHash;
  const inBlock = await logsOk(n.url, { blockHash: h });
  t.true(inBlock.length > 0);
  t.true(inBlock.every((l) => l.blockHash === h));
  t.deepEqual(
    inBlock,
    all.filter((l) => l.blockHash === h),
  );
});

test('eth_getLogs errors: reversed range, range beyond head, unknown blockHash, 5 topic slots, malformed filters', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  // A head above 0, so that [head, 0] is a reversed range.
  const head = await waitFor(async () => Math.max(0, Number(await rpcOk(n.url, 'eth_blockNumber')) - 1), 15_000, 'block 2');
  const err = async (filter: Record<string, unknown>) => (await getLogs(n.url, filter)).error;
  const reversed = await err({ fromBlock: ethers.toQuantity(head), toBlock: '0x0' });
  t.is(reversed?.code, -32602);
  t.is(reversed?.message, 'invalid block range params');
  t.is((await err({ fromBlock: '0x0', toBlock: ethers.toQuantity(head + 1000) }))?.code, -32602);
  t.is((await err({ fromBlock: ethers.toQuantity(head + 1000) }))?.code, -32602);
  t.deepEqual(await err({ blockHash: ethers.id('no such block') }), { code: -32000, message: 'unknown block' });
  t.is((await err({ blockHash: ethers.id('x'), fromBlock: '0x0' }))?.code, -32602);
  const five = await err({ fromBlock: '0x0', topics: [null, null, null, null, null] });
  t.is(five?.code, -32602);
  t.is((await err({ address: '0x1234' }))?.code, -32602);
  t.is((await err({ topics: ['0x1234'] }))?.code, -32602);
  t.is((await err({ fromBlock: 'newest' }))?.code, -32602);
  t.is((await rpc(n.url, 'eth_getLogs', ['latest'])).error?.code, -32602);
  t.deepEqual(await logsOk(n.url, {}), [], 'an empty filter is the head block');
});

/**
 * A chain whose head is past 10,000: 10,050 empty blocks appended to the store directly (hash-linked,
 * state untouched; seconds instead of the minutes real production would take), then a node started on it
 * with the same genesis, which produces real blocks on top.
 */
async function longChainNode(t: { teardown(fn: () => void): void }): Promise<TestNode> {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const v = randomKeyPair();
  const funded = devKey(0).address;
  const genesisTimestamp = Math.floor(Date.now() / 1000) - 20_000;
  const params = {
    network: 'dev' as const,
    chainId: 7120,
    genesisTimestamp,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v' }],
    alloc: new Map([[funded, 10_000n * BASE_PER_COIN]]),
    evmHardfork: 'prague',
    epochLength: 3600,
  };
  const db = await openRocksStore(join(tmp.dir, 'db')); // the node's layout: <data dir>/db
  const chain = new Chain(params, db, 16);
  await chain.open();
  let prev = chain.head;
  for (let h = 1; h <= 10_050; h++) {
    const header = {
      version: 1,
      index: h,
      previous_hash: prev.hash,
      timestamp: genesisTimestamp + h,
      tx_count: 0,
      validator: v.address,
      merkle_root: txMerkleRoot([]),
      state_root: prev.state_root,
      receipts_root: prev.receipts_root,
      round: 0,
      gas_used: 0n,
      logs_bloom: EMPTY_BLOOM_HEX,
      consensus: 'PoA' as const,
      last_commit_hash: '',
      evidence_hash: '',
    };
    const block: Block = {
      ...header,
      hash: blockHash(header),
      signature: '',
      justification: new Uint8Array(0),
      transactions: [],
      last_commit: new Uint8Array(0),
      evidence: [],
    };
    await chain.blocks.commit(block, new Map(), []);
    prev = block;
  }
  await db.close();
  saveValidatorKey(tmp.dir, v);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, params);
  return startTestNode({ dataDir: tmp.dir, genesisFile });
}

test('eth_getLogs range cap: 10,000 blocks are served, 10,001 answer -32005', async (t) => {
  const n = await longChainNode(t);
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 0, provider);
  const { address } = await deploy(w, n.url);
  const rc = await waitReceipt(n.url, (await sendBatch(n.url, [await signBox(w, address, 'store', [9n], 1)]))[0]);
  const at = Number(rc.blockNumber);
  t.true(at > 10_050);

  const capped = await getLogs(n.url, { fromBlock: '0x0', toBlock: 'latest' });
  t.is(capped.error?.code, -32005);
  t.regex(capped.error!.message, /more than 10000/);
  t.is((await getLogs(n.url, { fromBlock: 'earliest', address })).error?.code, -32005);
  t.is((await getLogs(n.url, { fromBlock: ethers.toQuantity(at - 10_000), toBlock: rc.blockNumber })).error?.code, -32005);
  // Exactly 10,000 blocks (most of them read from disk) is within the cap.
  const logs = await logsOk(n.url, { fromBlock: ethers.toQuantity(at - 9_999), toBlock: rc.blockNumber, topics: [STORED] });
  t.deepEqual(
    logs.map((l) => [l.address, l.transactionHash]),
    [[address, rc.transactionHash]],
  );
});
