import { Writable } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { BLOCK_GAS_LIMIT, fitsPack } from '../../ts/execution/index.js';
import { parseConfig, NativeNode } from '../../ts/node/index.js';
import { ethersWallet, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { TEST_NODE_ENV, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

/** Init code that loops until its gas runs out (the transaction fails, its whole gas limit is used). */
const LOOP = '0x5b600056';

/** Loop transactions with these gas limits from one account, sent in one JSON-RPC batch; their receipts. */
async function sendLoops(t: ExecutionContext, url: string, gas: bigint[]): Promise<{ blockNumber: string; gasUsed: string }[]> {
  const w = ethersWallet(url, 0);
  t.teardown(() => w.provider?.destroy());
  const raws = await Promise.all(gas.map((g, i) => signCall(w, null, LOOP, i, g)));
  const batch = await httpJson(`${url}/rpc`, {
    method: 'POST',
    json: raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] })),
  });
  const hashes = (batch.body as { result: string }[]).map((r) => r.result);
  return Promise.all(hashes.map((h) => waitReceipt(url, h)));
}

test('with --block-pack-ms 0 the proposer packs up to --block-pack-gas of EVM gas; a bigger transaction still goes in first', async (t) => {
  const n = await startTestNode({ packGasLimit: 1_000_000n, packTimeMs: 0 });
  t.teardown(() => n.stop());
  // Three 600k-gas transactions: one per block (the second would pass the 1M packing limit), then one
  // of 2M gas, above the limit but within the 30M validity limit: alone in its block.
  // One batch: all four are pending together (without the packing limit they would share one block).
  const gas = [600_000n, 600_000n, 600_000n, 2_000_000n];
  const receipts = await sendLoops(t, n.url, gas);
  const heights = receipts.map((r) => Number(r.blockNumber));
  t.deepEqual(
    receipts.map((r) => BigInt(r.gasUsed)),
    gas,
  );
  t.is(new Set(heights).size, 4, `one per block: ${heights}`);
  for (let i = 1; i < heights.length; i++) t.true(heights[i] > heights[i - 1]);
});

test('fitsPack: the gas rule, then the time budget against the worst case of the next transaction', (t) => {
  const pack = { gas: 5_000_000n, ms: 400 };
  // The block's first EVM transaction may use all of the validity limit; nothing goes past it.
  t.true(fitsPack(pack, 0n, 29_000_000n, 10_000));
  t.false(fitsPack(pack, 0n, BLOCK_GAS_LIMIT + 1n, 0));
  t.false(fitsPack(undefined, 29_990_000n, 21_000n, 0));
  // Within the packing gas: always, however long the block has taken.
  t.true(fitsPack(pack, 4_000_000n, 1_000_000n, 10_000));
  // Beyond it: while the time spent plus the next one's worst case (gas x 400 ms / 5M) stays within 400 ms.
  t.true(fitsPack(pack, 6_000_000n, 21_000n, 398));
  t.false(fitsPack(pack, 6_000_000n, 21_000n, 399));
  t.true(fitsPack(pack, 6_000_000n, 2_500_000n, 200));
  t.false(fitsPack(pack, 6_000_000n, 2_500_000n, 201));
  // A transaction above the packing gas never fits by time (its worst case alone is over the budget).
  t.false(fitsPack(pack, 21_000n, 5_000_001n, 0));
  // ms 0: the gas rule alone; validation (no pack): the 30M limit alone.
  t.false(fitsPack({ gas: 5_000_000n, ms: 0 }, 5_000_000n, 21_000n, 0));
  t.true(fitsPack(undefined, 25_000_000n, 5_000_000n, 10_000));
});

test('beyond --block-pack-gas the proposer keeps packing while the block fits --block-pack-ms', async (t) => {
  // A time budget no block reaches here: the 600k-gas loops share blocks past the 1M packing gas (their
  // worst case, 600k x 600 s / 1M, fits), while a 2M one (worst case 1,200 s) waits to go first in a block.
  const n = await startTestNode({ packGasLimit: 1_000_000n, packTimeMs: 600_000 });
  t.teardown(() => n.stop());
  const receipts = await sendLoops(t, n.url, [600_000n, 600_000n, 600_000n, 600_000n, 600_000n, 2_000_000n]);
  const heights = receipts.map((r) => Number(r.blockNumber));
  // Admission of the batch may straddle a slot; packing by gas alone would give five blocks for the five.
  const perBlock = new Map<number, number>();
  for (const h of heights.slice(0, 5)) perBlock.set(h, (perBlock.get(h) ?? 0) + 1);
  t.true(Math.max(...perBlock.values()) >= 2, `600k loops per block: ${[...perBlock.values()]}`);
  t.true(
    heights.slice(0, 5).every((h) => h < heights[5]),
    `the 2M one after the loops: ${heights}`,
  );
  const block = await rpcOk(n.url, 'eth_getBlockByNumber', [`0x${heights[5].toString(16)}`, false]);
  t.is((block as { transactions: string[] }).transactions.length, 1, 'the 2M one alone in its block');
});

test('a block committed after its slot is logged as a warning and counted', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const config = {
    ...parseConfig(['--dev'], TEST_NODE_ENV),
    apiPort: 0,
    dataDir: tmp.dir,
    blockTimeMs: 100,
    // No packing limit beyond the first transaction anyway: one 16M-gas loop (osaka's per-transaction cap is 2^24) takes far more than 100 ms.
    logLevel: 'warn',
  };
  const node = await NativeNode.start(config, pino({ level: 'warn' }, sink));
  t.teardown(() => node.stop());
  const url = `http://127.0.0.1:${node.http.port}`;
  const w = ethersWallet(url, 0);
  t.teardown(() => w.provider?.destroy());
  const hash = await rpcOk(url, 'eth_sendRawTransaction', [await signCall(w, null, LOOP, 0, 16_000_000n)]);
  const r = await waitReceipt(url, hash);
  const late = lines.find((l) => l.msg === 'block ran late: committed after its slot' && l.height === Number(r.blockNumber));
  t.truthy(late, JSON.stringify(lines.slice(-3)));
  t.is(late.level, 40);
  t.is(late.gasUsed, 16_000_000);
  t.true(late.lateMs > 0);
  t.is(late.blockTimeMs, 100);
  const metrics = await httpJson(`${url}/metrics`);
  t.regex(metrics.text, /^native_blocks_late_total [1-9]/m);
});
