import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { parseConfig } from '../../ts/node/config.js';
import { NativeNode } from '../../ts/node/node.js';
import { ethersWallet, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { TEST_NODE_ENV, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

/** Init code that loops until its gas runs out (the transaction fails, its whole gas limit is used). */
const LOOP = '0x5b600056';

test('the proposer packs up to --block-pack-gas of EVM gas; a bigger transaction still goes in first', async (t) => {
  const n = await startTestNode({ packGasLimit: 1_000_000n });
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 0);
  t.teardown(() => w.provider?.destroy());
  // Three 600k-gas transactions: one per block (the second would pass the 1M packing limit), then one
  // of 2M gas, above the limit but within the 30M validity limit: alone in its block.
  const gas = [600_000n, 600_000n, 600_000n, 2_000_000n];
  const raws = await Promise.all(gas.map((g, i) => signCall(w, null, LOOP, i, g)));
  // One batch: all four are pending together (without the packing limit they would share one block).
  const batch = await httpJson(`${n.url}/rpc`, {
    method: 'POST',
    json: raws.map((raw, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [raw] })),
  });
  const hashes = (batch.body as { result: string }[]).map((r) => r.result);
  const receipts = await Promise.all(hashes.map((h) => waitReceipt(n.url, h)));
  const heights = receipts.map((r) => Number(r.blockNumber));
  t.deepEqual(
    receipts.map((r) => BigInt(r.gasUsed)),
    gas,
  );
  t.is(new Set(heights).size, 4, `one per block: ${heights}`);
  for (let i = 1; i < heights.length; i++) t.true(heights[i] > heights[i - 1]);
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
    // No packing limit beyond the first transaction anyway: one 20M-gas loop takes far more than 100 ms.
    logLevel: 'warn',
  };
  const node = await NativeNode.start(config, pino({ level: 'warn' }, sink));
  t.teardown(() => node.stop());
  const url = `http://127.0.0.1:${node.http.port}`;
  const w = ethersWallet(url, 0);
  t.teardown(() => w.provider?.destroy());
  const hash = await rpcOk(url, 'eth_sendRawTransaction', [await signCall(w, null, LOOP, 0, 20_000_000n)]);
  const r = await waitReceipt(url, hash);
  const late = lines.find((l) => l.msg === 'block ran late: committed after its slot' && l.height === Number(r.blockNumber));
  t.truthy(late, JSON.stringify(lines.slice(-3)));
  t.is(late.level, 40);
  t.is(late.gasUsed, 20_000_000);
  t.true(late.lateMs > 0);
  t.is(late.blockTimeMs, 100);
  const metrics = await httpJson(`${url}/metrics`);
  t.regex(metrics.text, /^native_blocks_late_total [1-9]/m);
});
