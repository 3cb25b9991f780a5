import { readFileSync, readdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { KeyPair } from '../../ts/ledger/keys.js';
import { type SignedTransaction, signTransaction } from '../../ts/ledger/transaction.js';
import { TxJournal, readFrames } from '../../ts/mempool/tx-journal.js';
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
  t.is(readFrames(readFileSync(path)).payloads.length, 3);
  truncateSync(path, readFileSync(path).length - 5); // a crash in the middle of the last record
  const reopened = await TxJournal.open(tmp.dir);
  t.deepEqual(
    reopened.replay.map((tx) => tx.txid),
    txs.slice(0, 2).map((tx) => tx.txid),
  );
  await reopened.journal.close();
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
