import test from 'ava';
import { ethers } from 'ethers';
import { closeParallelExecution } from '../../ts/execution/index.js';
import { devPrivateKey, rpcOk, signTransfer, waitReceipt } from '../helpers/evm.js';
import { httpJson, startTestNode } from '../helpers/node.js';

// Parallel execution is process-wide: whatever this file's node started ends with it.
test.after.always(closeParallelExecution);

const SENDERS = 70;
/** Each sender pays a recipient of its own: the transfers are independent, so worker results can be committed. */
const recipient = (i: number): string => `0x${'5a'.repeat(18)}${i.toString(16).padStart(4, '0')}`;

/** One JSON-RPC batch of raw transactions; every one must be accepted. Returns their hashes. */
async function sendBatch(url: string, raws: string[]): Promise<string[]> {
  const r = await httpJson(`${url}/rpc`, {
    method: 'POST',
    json: raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] })),
  });
  const replies = r.body as { result?: string; error?: { message: string } }[];
  const refused = replies.find((x) => x.error);
  if (refused) throw new Error(`refused: ${refused.error?.message}`);
  return replies.map((x) => x.result as string);
}

const metric = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
};

test('a node with the default config runs its big EVM blocks in parallel: same balances, a valid chain, and the counters in /metrics', async (t) => {
  t.timeout(180_000);
  const n = await startTestNode({ blockTimeMs: 500 });
  t.teardown(() => n.stop());
  t.true(n.node.config.parallelEvmWorkers > 0, 'on by default on this machine');
  // 70 fresh senders, funded by one dev account in one batch (a block of 64+ EVM transactions: the workers start).
  const senders = Array.from({ length: SENDERS }, () => ethers.Wallet.createRandom());
  const funding = await sendBatch(
    n.url,
    await Promise.all(senders.map((s, i) => signTransfer(devPrivateKey(0), i, s.address, 10n ** 18n))),
  );
  await Promise.all(funding.map((h) => waitReceipt(n.url, h, 60_000)));
  // Rounds of one transfer from every sender: a block of 70 independent transactions each (a block tick can split
  // one; the workers need a moment to load), until one ran in parallel.
  let rounds = 0;
  let parallelBlocks = 0;
  while (rounds < 6 && parallelBlocks === 0) {
    const hashes = await sendBatch(
      n.url,
      await Promise.all(senders.map((s, i) => signTransfer(s.privateKey, rounds, recipient(i), 1n))),
    );
    const receipts = await Promise.all(hashes.map((h) => waitReceipt(n.url, h, 60_000)));
    t.true(receipts.every((r) => r.status === '0x1'));
    rounds++;
    parallelBlocks = metric((await httpJson(`${n.url}/metrics`)).text, 'native_parallel_blocks_total');
  }
  t.true(parallelBlocks >= 1, `blocks run in parallel: ${parallelBlocks} after ${rounds} rounds`);
  const metrics = (await httpJson(`${n.url}/metrics`)).text;
  t.true(metric(metrics, 'native_parallel_workers') >= 1);
  const outcomes = ['committed', 'conflict', 'miss', 'late'].map((o) =>
    metric(metrics, `native_parallel_results_total{outcome="${o}"}`),
  );
  t.false(outcomes.some(Number.isNaN), `every outcome is exported: ${outcomes}`);
  t.true(outcomes.reduce((a, b) => a + b) > 0, 'the worker region of a parallel block is counted');
  // Every transfer arrived, whoever executed it.
  for (const i of [0, 1, SENDERS / 2, SENDERS - 1])
    t.is(BigInt(await rpcOk(n.url, 'eth_getBalance', [recipient(i), 'latest'])), BigInt(rounds), `recipient ${i}`);
  // Re-executing the whole chain (in parallel now that the workers are up) gives the stored roots and receipts.
  const before = metric(metrics, 'native_parallel_blocks_total');
  const v = (await httpJson(`${n.url}/chain/validate`)).body;
  t.true(v.valid, JSON.stringify(v));
  const after = metric((await httpJson(`${n.url}/metrics`)).text, 'native_parallel_blocks_total');
  t.true(after > before, `validation ran blocks in parallel too (${before} -> ${after})`);
});
