import test from 'ava';
import {
  EvmSender,
  callData,
  contract,
  deployData,
  devParams,
  openChain,
  produce,
  type DevChain,
} from '../../bench/evm-fixtures.js';
import { MAX_INDEXED_GROUP_TERMS } from '../../ts/chain/log-index.js';
import { DEV_MNEMONIC, keyPairFromMnemonic, randomKeyPair, signTransaction } from '../../ts/ledger/index.js';
import { getAccount } from '../../ts/state/index.js';
import { findLogs } from '../../ts/services/index.js';
import { type FoundLog, type LogFilter, logMatches, locateReceipts } from '../../ts/events/index.js';
import { P, metaKey, prefixEnd } from '../../ts/storage/index.js';
import { fromHex, to0x } from '../../ts/util/index.js';
import { tempDir } from '../helpers/util.js';
import { rng } from '../helpers/util.js';

const WINDOW = 8;
const keys = [0, 1, 2].map((i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
const nativeSender = keyPairFromMnemonic(DEV_MNEMONIC, 3);
const validator = randomKeyPair();
const params = devParams(
  validator,
  [...keys, nativeSender].map((k) => k.address),
);
const topicPool = ['aa', 'bb', 'cc', 'dd', 'ee'].map((b) => to0x(Buffer.alloc(32, Number.parseInt(b, 16))));
const whoPool = [`0x${'11'.repeat(20)}`, `0x${'22'.repeat(20)}`, keys[0].address];
const whoTopics = whoPool.map((w) => to0x(Buffer.concat([Buffer.alloc(12), fromHex(w)])));
/** Topic 0 of the named events (Three and Two twice: most filters on topic 0 name an event). */
const eventTopics = ['Three', 'Three', 'Two', 'Two', 'Plain'].map(
  (e) => contract('Emitter').iface.getEvent(e)?.topicHash as string,
);
const unknown = { address: fromHex(`0x${'99'.repeat(20)}`), topic: Buffer.alloc(32, 0x99) };

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** Block 1 deploys three emitters; then `blocks` blocks: empty, native-only, or 1-3 calls emitting 1-7 logs. */
async function buildChain(dev: DevChain, blocks: number, seed: number): Promise<string[]> {
  const r = rng(seed);
  const senders = keys.map((k) => new EvmSender(k));
  const deploy = await produce(
    dev,
    [0, 1, 2].map(() => senders[0].tx(undefined, deployData('Emitter'))),
  );
  const emitters = deploy.result.receipts.map((rc) => to0x(rc.contractAddress as Uint8Array));
  let nativeNonce = 0n;
  for (let i = 0; i < blocks; i++) {
    const kind = r();
    const txs = [];
    if (kind >= 0.4 && kind < 0.5) {
      txs.push(
        signTransaction(
          { from: nativeSender.address, to: keys[1].address, amount: 1n, fee: 10_000n, nonce: nativeNonce++, chain_id: 7120 },
          nativeSender,
        ),
      );
    } else if (kind >= 0.5) {
      const calls = 1 + Math.floor(r() * 3);
      for (let c = 0; c < calls; c++) {
        const xs = Array.from({ length: Math.floor(r() * 8) }, () => pick(r, topicPool));
        txs.push(pick(r, senders).tx(pick(r, emitters), callData('Emitter', 'fire', [xs, pick(r, whoPool)])));
      }
    }
    await produce(dev, txs);
  }
  return emitters;
}

/** The reference: every block's receipts, every log matched (no bloom, no index). */
async function scanAll(dev: DevChain, f: LogFilter): Promise<FoundLog[]> {
  const out: FoundLog[] = [];
  for (let h = f.fromBlock; h <= f.toBlock; h++) {
    const b = await dev.chain.blocks.getBlock(h);
    const rs = await dev.chain.blocks.receipts(h);
    if (!b || !rs) continue;
    for (const r of locateReceipts(h, rs)) {
      r.receipt.logs.forEach((log, i) => {
        if (logMatches(log, f)) {
          const at = { blockHash: b.hash, blockNumber: h, txHash: b.transactions[r.index].txid, txIndex: r.index };
          out.push({ log, at: { ...at, logIndex: r.firstLogIndex + i } });
        }
      });
    }
  }
  return out;
}

const shape = (logs: FoundLog[]) =>
  logs.map((l) => ({ ...l.at, address: to0x(l.log.address), topics: l.log.topics.map(to0x), data: to0x(l.log.data) }));

function randomFilter(r: () => number, head: number, emitters: string[]): LogFilter {
  const a = Math.floor(r() * (head + 1));
  const b = Math.floor(r() * (head + 1));
  const addresses: Uint8Array[] = [];
  const na = pick(r, [0, 0, 1, 1, 2]);
  for (let i = 0; i < na; i++) addresses.push(r() < 0.15 ? unknown.address : fromHex(pick(r, emitters)));
  const topics = Array.from({ length: Math.floor(r() * 5) }, (_, slot) => {
    const u = r();
    if (u < 0.4) return null;
    const n = u < 0.8 ? 1 : 2;
    const values = slot === 0 ? [...eventTopics, ...topicPool] : slot === 1 ? [...topicPool, ...whoTopics] : topicPool;
    return Array.from({ length: n }, () => (r() < 0.1 ? unknown.topic : fromHex(pick(r, values))));
  });
  return { fromBlock: Math.min(a, b), toBlock: Math.max(a, b), addresses, topics };
}

async function setup(t: { teardown(fn: () => void): void }, blocks = 70, seed = 7) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const dev = await openChain(tmp.dir, params, validator, WINDOW);
  const emitters = await buildChain(dev, blocks, seed);
  return { tmp, dev, emitters };
}

test('getLogs through the index equals a full scan on randomized filters', async (t) => {
  const { dev, emitters } = await setup(t);
  t.teardown(() => dev.close());
  const head = dev.chain.height;
  t.true((await scanAll(dev, { fromBlock: 0, toBlock: head, addresses: [], topics: [] })).length > 50, 'chain has logs');
  const r = rng(99);
  let nonEmpty = 0;
  for (let i = 0; i < 300; i++) {
    const f = randomFilter(r, head, emitters);
    const expected = await scanAll(dev, f);
    if (expected.length) nonEmpty++;
    t.deepEqual(shape(await findLogs(dev, f)), shape(expected), JSON.stringify({ i, from: f.fromBlock, to: f.toBlock }));
  }
  t.true(nonEmpty > 100, `filters with results: ${nonEmpty}`);
  // A group too large to look up is left to exact matching.
  const slot = [fromHex(topicPool[0]), ...Array.from({ length: MAX_INDEXED_GROUP_TERMS }, (_, i) => Buffer.alloc(32, i))];
  const many: LogFilter = { fromBlock: 0, toBlock: head, addresses: [], topics: [null, slot] };
  t.deepEqual(shape(await findLogs(dev, many)), shape(await scanAll(dev, many)));
});

test('postings below the window are exact: only blocks with a matching term are read', async (t) => {
  const { dev, emitters } = await setup(t, 40, 3);
  t.teardown(() => dev.close());
  const diskTo = dev.chain.blocks.windowStart - 1;
  const withLogs = async (pred: (f: FoundLog) => boolean) => [
    ...new Set(
      (await scanAll(dev, { fromBlock: 0, toBlock: diskTo, addresses: [], topics: [] }))
        .filter(pred)
        .map((l) => l.at.blockNumber),
    ),
  ];
  const idx = dev.chain.blocks.logIndex;
  const e = fromHex(emitters[1]);
  t.deepEqual(
    await idx.postings(0, diskTo, { addresses: [e], topics: [] }),
    await withLogs((l) => Buffer.compare(l.log.address, e) === 0),
  );
  t.deepEqual(await idx.postings(0, diskTo, { addresses: [], topics: [] }), await withLogs(() => true));
  const x = fromHex(topicPool[2]);
  const hits = await withLogs(
    (l) => Buffer.compare(l.log.address, e) === 0 && l.log.topics[1] !== undefined && Buffer.compare(l.log.topics[1], x) === 0,
  );
  const cand = await idx.postings(0, diskTo, { addresses: [e], topics: [null, [x]] });
  t.true(
    hits.every((h) => cand.includes(h)),
    'no block with a match is missed',
  );
  t.deepEqual(await idx.postings(0, diskTo, { addresses: [unknown.address], topics: [] }), []);
});

test('the index survives a restart, and a store without it is indexed at open', async (t) => {
  const { tmp, dev, emitters } = await setup(t, 50, 11);
  const head = dev.chain.height;
  const r = rng(5);
  const filters = Array.from({ length: 60 }, () => randomFilter(r, head, emitters));
  filters.push({ fromBlock: 0, toBlock: head, addresses: [], topics: [] });
  const before = await Promise.all(filters.map(async (f) => shape(await findLogs(dev, f))));
  const indexRange = { gte: Buffer.from([P.logIndex]), lt: prefixEnd(Buffer.from([P.logIndex])) };
  const rows = (await dev.db.range(indexRange)).length;
  t.true(rows > 0);
  await dev.close();

  // Reopen: postings from disk, blooms of the window rebuilt from the window's blocks.
  let again = await openChain(tmp.dir, params, validator, WINDOW);
  t.is(again.chain.height, head);
  for (const [i, f] of filters.entries()) t.deepEqual(shape(await findLogs(again, f)), before[i]);
  t.deepEqual(
    again.chain.blocks.logIndex.blooms.scan(again.chain.blocks.windowStart, head, []),
    [...new Set(before[before.length - 1].map((l) => l.blockNumber))].filter((h) => h >= again.chain.blocks.windowStart),
  );
  // Drop the index and its marker (a store from before the index): open rebuilds it from the receipts.
  const drop = (await again.db.range(indexRange)).map(([key]) => ({ type: 'del' as const, key }));
  await again.db.write([...drop, { type: 'del', key: metaKey('log-index-v1') }]);
  await again.close();
  again = await openChain(tmp.dir, params, validator, WINDOW);
  t.teardown(() => again.close());
  t.is((await again.db.range(indexRange)).length, rows);
  for (const [i, f] of filters.entries()) t.deepEqual(shape(await findLogs(again, f)), before[i]);
  // New blocks keep being indexed in their commit batch.
  const sender = new EvmSender(keys[2]);
  sender.nonce = getAccount(again.chain.state, keys[2].address).nonce;
  await produce(again, [sender.tx(emitters[0], callData('Emitter', 'fire', [[topicPool[4]], whoPool[0]]))]);
  t.true((await again.db.range(indexRange)).length > rows);
  const last = { fromBlock: head + 1, toBlock: head + 1, addresses: [], topics: [] };
  t.is((await findLogs(again, last)).length, 2);
});
