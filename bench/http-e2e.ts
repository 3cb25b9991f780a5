import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { keyPairFromMnemonic, DEV_MNEMONIC } from '../ts/ledger/keys.js';
import { signTransaction } from '../ts/ledger/transaction.js';
import { BASE_PER_COIN } from '../ts/ledger/units.js';
import { parseConfig } from '../ts/node/config.js';
import { NativeNode } from '../ts/node/node.js';
import { stringifyExact } from '../ts/util/json.js';
import type { Row } from './ledger.js';
import { senderKeys, signedTransfers } from './fixtures.js';

/**
 * End-to-end: one client pipelining POST /transactions (64 in flight, keep-alive) into a dev node,
 * measured from the first submission until every transaction is in a committed block.
 */
export async function benchHttpSubmission(backend: 'uws' | 'node', senders = 200, perSender = 50): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-http-'));
  const node = await NativeNode.start(
    { ...parseConfig(['--dev', '--data-dir', dir], {}), apiPort: 0, logLevel: 'silent', httpBackend: backend, maxPerSender: 10_000 },
    pino({ level: 'silent' }),
  );
  const url = `http://127.0.0.1:${node.http.port}`;
  try {
    // Fund the bench senders from a dev account in one block.
    const keys = senderKeys(senders);
    const funder = keyPairFromMnemonic(DEV_MNEMONIC, 0);
    let fn = 0n;
    for (const k of keys) {
      const tx = signTransaction({ from: funder.address, to: k.address, amount: 10n * BASE_PER_COIN, fee: 10_000n, nonce: fn++, chain_id: 7120 }, funder);
      await node.ctx.admission.submit(tx);
    }
    while (node.ctx.mempool.size > 0) await new Promise((r) => setTimeout(r, 50));
    const txs = signedTransfers(keys, perSender, 7120);
    const bodies = txs.map((tx) => stringifyExact({ transaction: tx }));
    const startHeight = node.ctx.chain.height;
    let next = 0;
    let accepted = 0;
    let rejected = 0;
    const t0 = performance.now();
    const worker = async (): Promise<void> => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const r = await fetch(`${url}/transactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await r.arrayBuffer();
        if (r.status === 200) accepted++;
        else rejected++;
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const t1 = performance.now();
    while (node.ctx.mempool.size > 0) await new Promise((r) => setTimeout(r, 10));
    const t2 = performance.now();
    let included = 0;
    for (let h = startHeight + 1; h <= node.ctx.chain.height; h++) included += (await node.ctx.chain.blocks.getBlock(h))?.tx_count ?? 0;
    return [
      {
        name: `HTTP submission [${backend}]: ${txs.length.toLocaleString()} signed transfers, 64 in flight`,
        value: `${Math.round(accepted / ((t1 - t0) / 1000)).toLocaleString()} tx/s accepted`,
        note: `${accepted} accepted, ${rejected} rejected`,
      },
      {
        name: `HTTP submission -> inclusion [${backend}]`,
        value: `${Math.round(included / ((t2 - t0) / 1000)).toLocaleString()} tx/s`,
        note: `${included} included in ${node.ctx.chain.height - startHeight} blocks, ${((t2 - t0) / 1000).toFixed(2)} s (1 s block time bounds the tail)`,
      },
    ];
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
