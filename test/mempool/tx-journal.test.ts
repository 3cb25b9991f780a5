import { closeSync, openSync, readFileSync, readdirSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { type KeyPair, type SignedTransaction, signTransaction } from '../../ts/ledger/index.js';
import { GroupCommit, TxJournal, readFrames } from '../../ts/mempool/tx-journal.js';
import { spawnNode } from '../helpers/child-node.js';
import { CHAIN_ID, devKey } from '../helpers/evm.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const FEE = 10_000n;
/** A fresh recipient per sender (its balance is what it received). */
const recipient = (i: number): string => `0x${'ab'.repeat(19)}${i.toString(16).padStart(2, '0')}`;

function transferTx(from: KeyPair, to: string, amount: bigint, nonce: bigint): SignedTransaction {
  return signTransaction({ from: from.address, to, amount, fee: FEE, nonce, chain_id: CHAIN_ID }, from);
}

test('journal segments: records read back in order; a torn tail is ignored', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const txs = [1n, 2n, 3n].map((n) => transferTx(devKey(1), devKey(2).address, n, n));
  const { journal } = await TxJournal.open(tmp.dir);
  await Promise.all(txs.map((tx) => journal.append(tx)));
  await journal.close();
  const [seg] = readdirSync(tmp.dir);
  const path = join(tmp.dir, seg);
  const { payloads, validBytes } = readFrames(readFileSync(path));
  t.is(payloads.length, 3);
  // The segment is zero-filled past its records (written ahead), and the zeros read as its end.
  t.true(statSync(path).size > validBytes);
  // A crash in the middle of the last record's write: its last bytes never reached the disk.
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(5), 0, 5, validBytes - 5);
  closeSync(fd);
  const reopened = await TxJournal.open(tmp.dir);
  t.deepEqual(
    reopened.replay.map((tx) => tx.txid),
    txs.slice(0, 2).map((tx) => tx.txid),
  );
  await reopened.journal.close();
  // A file cut short in a record (a write that grew the file past its zero-filled part) reads the same way.
  truncateSync(path, validBytes - 5);
  const again = await TxJournal.open(tmp.dir);
  t.is(again.replay.length, 2);
  await again.journal.close();
});

test('journal segments: groups cross zero-filled chunks and segments; replay keeps arrival order; pruning deletes', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const sizes = { segmentBytes: 64 * 1024, chunkBytes: 8 * 1024 };
  const from = devKey(1);
  const to = devKey(2).address;
  const txs = Array.from({ length: 1200 }, (_, i) => transferTx(from, to, 1n, BigInt(i)));
  const { journal } = await TxJournal.open(tmp.dir, sizes);
  // Groups of varied sizes (each batch is appended in one run of continuations).
  for (let i = 0; i < txs.length; ) {
    const n = 1 + (i % 37);
    await Promise.all(txs.slice(i, i + n).map((tx) => journal.append(tx)));
    i += n;
  }
  t.true(journal.groups > 30 && journal.groups < txs.length, `${journal.groups} groups`);
  await journal.close();
  const segments = readdirSync(tmp.dir).sort();
  t.true(segments.length >= 4, `${segments.length} segments`);
  for (const name of segments) t.true(statSync(join(tmp.dir, name)).size <= sizes.segmentBytes + sizes.chunkBytes);
  const { journal: reopened, replay } = await TxJournal.open(tmp.dir, sizes);
  t.deepEqual(
    replay.map((tx) => tx.txid),
    txs.map((tx) => tx.txid),
  );
  // All but the last 10 are in blocks: every segment without a pending transaction goes.
  const pending = new Set(txs.slice(-10).map((tx) => tx.txid));
  reopened.prune(
    txs.slice(0, -10).map((tx) => tx.txid),
    (id) => pending.has(id),
  );
  t.is(reopened.size, 10);
  await reopened.close();
  const kept = segments[segments.length - 1];
  await waitFor(
    () => readdirSync(tmp.dir).every((name) => name >= kept),
    10_000,
    'segments without pending transactions deleted',
  );
  // The segment kept replays whole, in order (admission refuses what is already in a block).
  const last = await TxJournal.open(tmp.dir, sizes);
  const tail = last.replay.map((tx) => tx.txid);
  t.deepEqual(
    tail,
    txs.slice(txs.length - tail.length).map((tx) => tx.txid),
  );
  t.true(tail.length >= 10 && tail.length < txs.length);
  await last.journal.close();
});

/** Submits transfers from `senders` (each its own nonce sequence) until stopped; records what was answered 200. */
function load(
  url: string,
  senders: KeyPair[],
  nonces: Map<string, bigint>,
  sent: Map<string, SignedTransaction>,
  answered: Set<string>,
) {
  let stop = false;
  const loops = senders.map(async (from, i) => {
    const to = recipient(i);
    while (!stop) {
      const nonce = nonces.get(from.address) as bigint;
      const tx = transferTx(from, to, 1_000n + nonce, nonce);
      sent.set(tx.txid, tx);
      let r: Awaited<ReturnType<typeof httpJson>>;
      try {
        r = await httpJson(`${url}/transactions`, { method: 'POST', json: { transaction: tx } });
      } catch {
        return; // the node was killed mid-request: this one was never answered
      }
      if (r.status !== 200) throw new Error(`submit: ${r.status} ${r.text}`);
      answered.add(tx.txid);
      nonces.set(from.address, nonce + 1n);
    }
  });
  return {
    stop: async () => {
      stop = true;
      await Promise.all(loops);
    },
  };
}

test('SIGKILL under a load of transfers: every transaction answered 200 is included after the restart', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const senders = [3, 4, 5, 6].map(devKey);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '400'];
  const sent = new Map<string, SignedTransaction>();
  const answered = new Set<string>();
  const nonces = new Map(senders.map((s) => [s.address, 0n]));
  let node = await spawnNode(args);
  const initial = new Map<string, bigint>();
  for (const s of senders)
    initial.set(s.address, BigInt((await httpJson(`${node.url}/accounts/${s.address}/balance`)).body.balance));
  for (let round = 0; round < 3; round++) {
    const l = load(node.url, senders, nonces, sent, answered);
    // Killed at a random moment: between blocks, while admitting, while a block commits.
    await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 1200)));
    node.proc.kill('SIGKILL');
    await node.exited;
    await l.stop();
    node = await spawnNode(args);
    const url = node.url;
    // Every answered transaction is included (the journal replayed what was still pending).
    const unconfirmed = new Set(answered);
    await waitFor(
      async () => {
        for (const id of unconfirmed) {
          const r = await httpJson(`${url}/transactions/${id}`);
          if (r.status !== 200 || r.body.status !== 'confirmed') return false;
          unconfirmed.delete(id);
        }
        return true;
      },
      60_000,
      `round ${round}: every answered transaction confirmed`,
    );
    // A transfer in flight at the kill may have been journaled without its answer: replayed, it is pending now.
    // Resume after it too, once the pool has put it in a block (else the next nonce would replace it).
    await waitFor(async () => (await httpJson(`${url}/mempool`)).body.size === 0, 60_000, `round ${round}: the pool drained`);
    // The next nonce of each sender follows its last included transaction (no gap, no reuse).
    for (const s of senders) {
      const onChain = BigInt((await httpJson(`${url}/accounts/${s.address}/nonce`)).body.nonce);
      const mine = [...answered].map((id) => sent.get(id) as SignedTransaction).filter((tx) => tx.from_address === s.address);
      const highest = mine.reduce((m, tx) => (tx.nonce + 1n > m ? tx.nonce + 1n : m), 0n);
      t.true(onChain >= highest, `round ${round}: ${s.address} nonce ${onChain} covers answered ${highest}`);
      // Unanswered transactions (in flight at the kill) may or may not be in: resume after what is.
      nonces.set(s.address, onChain);
    }
  }
  // Balances add up: each sender paid exactly amount + fee for each of its included transactions, in nonce order.
  for (const [i, s] of senders.entries()) {
    const nonce = BigInt((await httpJson(`${node.url}/accounts/${s.address}/nonce`)).body.nonce);
    let spent = 0n;
    let received = 0n;
    for (let n = 0n; n < nonce; n++) {
      spent += 1_000n + n + FEE;
      received += 1_000n + n;
    }
    t.is(
      BigInt((await httpJson(`${node.url}/accounts/${s.address}/balance`)).body.balance),
      (initial.get(s.address) as bigint) - spent,
    );
    const to = recipient(i);
    t.is(BigInt((await httpJson(`${node.url}/accounts/${to}/balance`)).body.balance), received);
  }
  t.true(answered.size > 0);
  node.proc.kill('SIGTERM');
  await node.exited;
});

/** A sink whose writes finish when the test says (to order completions). */
function manualSink() {
  const writes: { records: readonly Buffer[]; done: () => void; fail: (e: Error) => void }[] = [];
  return {
    writes,
    sink: {
      write: (records: readonly Buffer[]) =>
        new Promise<void>((resolve, reject) => writes.push({ records, done: resolve, fail: reject })),
    },
  };
}

test('group commit: groups overlap on disk but are answered in order; a failure fails the groups taken behind it', async (t) => {
  const { writes, sink } = manualSink();
  const commit = new GroupCommit(sink, 2);
  const answered: string[] = [];
  const failed: string[] = [];
  const append = (name: string) =>
    commit.append(Buffer.from(name)).then(
      () => void answered.push(name),
      () => void failed.push(name),
    );
  const a = [append('a1'), append('a2')];
  await waitFor(() => writes.length === 1, 5_000, 'first group handed to the sink');
  const b = [append('b1')];
  await waitFor(() => writes.length === 2, 5_000, 'second group written while the first is');
  const c = [append('c1')];
  await new Promise((r) => setImmediate(r));
  t.is(writes.length, 2, 'at most two groups at once');
  t.deepEqual(
    writes.map((w) => w.records.map(String)),
    [['a1', 'a2'], ['b1']],
  );
  writes[1].done(); // the second group is durable first: not answered before the first
  await new Promise((r) => setImmediate(r));
  t.deepEqual(answered, []);
  await waitFor(() => writes.length === 3, 5_000, 'a slot freed: the third group starts');
  writes[0].done();
  await Promise.all([...a, ...b]);
  t.deepEqual(answered, ['a1', 'a2', 'b1']);
  // The fourth group is taken while the third is being written; the third fails, so does the fourth.
  const d = [append('d1')];
  await waitFor(() => writes.length === 4, 5_000, 'fourth group written');
  writes[3].done();
  writes[2].fail(new Error('disk gone'));
  await Promise.all([...c, ...d]);
  t.deepEqual(failed, ['c1', 'd1']);
  // Groups taken afterwards stand on their own.
  const e = append('e1');
  await waitFor(() => writes.length === 5, 5_000, 'fifth group written');
  writes[4].done();
  await e;
  t.deepEqual(answered, ['a1', 'a2', 'b1', 'e1']);
  await commit.drain();
});

test('journal: many concurrent submitters; every answered record replays, each submitter in its order', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const opts = { segmentBytes: 96 * 1024, chunkBytes: 16 * 1024, maxInFlight: 3 };
  const from = devKey(1);
  const to = devKey(2).address;
  const lanes = 24;
  const per = 40;
  const txs = Array.from({ length: lanes * per }, (_, i) => transferTx(from, to, 1n, BigInt(i)));
  const { journal } = await TxJournal.open(tmp.dir, opts);
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = 0; i < per; i++) {
        // Uneven pacing so groups of different sizes overlap.
        if ((lane + i) % 5 === 0) await new Promise((r) => setImmediate(r));
        await journal.append(txs[lane * per + i]);
      }
    }),
  );
  await journal.close();
  const { journal: reopened, replay } = await TxJournal.open(tmp.dir, opts);
  t.is(replay.length, txs.length);
  t.is(new Set(replay.map((tx) => tx.txid)).size, txs.length);
  const position = new Map(replay.map((tx, i) => [tx.txid, i]));
  for (let lane = 0; lane < lanes; lane++) {
    const order = txs.slice(lane * per, (lane + 1) * per).map((tx) => position.get(tx.txid) as number);
    t.deepEqual(
      order,
      [...order].sort((x, y) => x - y),
      `lane ${lane} in order`,
    );
  }
  t.true(readdirSync(tmp.dir).length >= 3, 'crossed segments');
  await reopened.close();
});

test('journal: a cancel record undoes the record before it; a later record of the same transaction counts again', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const [a, b, c] = [0n, 1n, 2n].map((n) => transferTx(devKey(1), devKey(2).address, 1n, n));
  const { journal } = await TxJournal.open(tmp.dir);
  await journal.append(a);
  await journal.append(b);
  await journal.append(b); // a second submission of b, refused as a duplicate
  await journal.cancel(b);
  await journal.append(c);
  await journal.cancel(c); // c refused ...
  await journal.cancel(a); // ... a too ...
  await journal.append(a); // ... then a submitted again and admitted: it replays where it was admitted
  await journal.close();
  const { journal: reopened, replay } = await TxJournal.open(tmp.dir);
  t.deepEqual(
    replay.map((tx) => tx.txid),
    [b.txid, a.txid],
  );
  t.is(reopened.size, 2);
  await reopened.close();
});

test('journal reset: with no record written it keeps its segment; with records it holds exactly the given transactions', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const [a, b] = [1n, 2n].map((n) => transferTx(devKey(1), devKey(2).address, n, n));
  const { journal } = await TxJournal.open(tmp.dir);
  const files = readdirSync(tmp.dir).sort();
  // Nothing journaled (a dev chain with automine): a reset (evm_revert) creates no segment and deletes none.
  await journal.reset([]);
  await journal.reset([]);
  t.deepEqual(readdirSync(tmp.dir).sort(), files);
  // A reset to a pool of one on an empty journal: that transaction is what a restart replays.
  await journal.reset([a]);
  await journal.close();
  const reopened = await TxJournal.open(tmp.dir);
  t.deepEqual(
    reopened.replay.map((tx) => tx.txid),
    [a.txid],
  );
  // Records found at open count: a reset to another pool replaces them (a restart replays b only).
  await reopened.journal.reset([b]);
  await reopened.journal.close();
  const again = await TxJournal.open(tmp.dir);
  t.deepEqual(
    again.replay.map((tx) => tx.txid),
    [b.txid],
  );
  // And a reset to an empty pool after records were written leaves nothing to replay.
  await again.journal.append(a);
  await again.journal.reset([]);
  await again.journal.close();
  const last = await TxJournal.open(tmp.dir);
  t.deepEqual(last.replay, []);
  await last.journal.close();
});
