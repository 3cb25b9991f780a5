import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeBlock, encodeBlock } from '../ts/chain/block.js';
import { Chain } from '../ts/chain/chain.js';
import { crypto } from '../ts/crypto/index.js';
import { randomKeyPair } from '../ts/ledger/keys.js';
import { checkNativeTransaction, markSignatureVerified } from '../ts/ledger/rules.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { StateStore, keyStr } from '../ts/state/state-store.js';
import { openRocksStore } from '../ts/storage/index.js';
import { fromHex } from '../ts/util/hex.js';
import { benchChainParams, senderKeys, signedTransfers } from './fixtures.js';

export interface Row {
  name: string;
  value: string;
  note?: string;
}

/** State root update: touch 10k accounts among 1M and re-root (steady-state median). */
export function benchStateRoot(total = 1_000_000, touched = 10_000): Row[] {
  const store = new StateStore();
  const keys: Buffer[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const k = Buffer.concat([Buffer.from([1]), randomBytes(20)]);
    keys.push(k);
    store.load(k, randomBytes(40));
  }
  store.root();
  const buildMs = performance.now() - t0;
  const times: number[] = [];
  // Two warm-up rounds (not counted): the first updates after building 1M entries pay for the
  // collector settling the freshly built heap; the median below is the steady state.
  for (let round = -2; round < 7; round++) {
    const changes = new Map<string, Buffer>();
    for (let i = 0; i < touched; i++) changes.set(keyStr(keys[(i * 97 + (round + 2) * 7919) % total]), randomBytes(40));
    const s = performance.now();
    store.applyChanges(changes);
    store.root();
    if (round >= 0) times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return [
    { name: `state root: build ${total.toLocaleString()} accounts from scratch`, value: `${(buildMs / 1000).toFixed(1)} s` },
    {
      name: `state root: update ${touched.toLocaleString()} touched among ${total.toLocaleString()}`,
      value: `${times[3].toFixed(1)} ms (median of 7 after 2 warm-up rounds; min ${times[0].toFixed(1)}, max ${times[6].toFixed(1)})`,
      note: `crypto backend ${crypto().name}`,
    },
  ];
}

/**
 * What admission did to these transactions before they reached the pool (the rules, one batched
 * signature check, both remembered per transaction), so block production sees them as the node does.
 */
export function admitForBench(chain: Chain, txs: readonly SignedTransaction[], now: number): void {
  const rules = chain.txRuleContext(chain.height + 1, now);
  const digests = txs.map((tx) => checkNativeTransaction(tx, rules).digest);
  const ok = crypto().verifyBatch(
    txs.map((tx) => fromHex(tx.signature)),
    digests,
    txs.map((tx) => fromHex(tx.public_key)),
  );
  ok.forEach((good, i) => good && markSignatureVerified(txs[i]));
}

/**
 * Block production of native transfers (execute, state root, header, signature and the block-validity
 * check that reuses the execution), the atomic commit, and the import of the same block by a second
 * node (decoded from its bytes: every rule, every signature, re-execution, state root).
 */
export async function benchBlockExecution(senders = 2000, perSender = 5): Promise<Row[]> {
  const keys = senderKeys(senders);
  const txs = signedTransfers(keys, perSender, 7120);
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-'));
  const validator = randomKeyPair();
  const params = benchChainParams(validator, keys);
  const db = await openRocksStore(join(dir, 'a'));
  const chain = new Chain(params, db, 1000);
  await chain.open();
  const ts = 1_700_000_001;
  chain.now = () => ts;
  admitForBench(chain, txs, ts);
  const t0 = performance.now();
  const p = await chain.propose(txs, validator, ts);
  const t1 = performance.now();
  await chain.commit(p);
  const t2 = performance.now();
  await db.close();

  const db2 = await openRocksStore(join(dir, 'b'));
  const peer = new Chain(params, db2, 1000);
  await peer.open();
  peer.now = () => ts;
  const received = decodeBlock(encodeBlock(p.block));
  const t3 = performance.now();
  await peer.importBlock(received);
  const t4 = performance.now();
  await db2.close();
  rmSync(dir, { recursive: true, force: true });
  const n = p.block.tx_count;
  return [
    {
      name: `block production: ${n.toLocaleString()} native transfers (execute + state root + validity check)`,
      value: `${Math.round(n / ((t1 - t0) / 1000)).toLocaleString()} tx/s`,
      note: `execute ${p.timings.executeMs.toFixed(0)} ms, state root ${p.timings.stateRootMs.toFixed(0)} ms, header/sign/validate ${(t1 - t0 - p.timings.executeMs - p.timings.stateRootMs).toFixed(0)} ms`,
    },
    {
      name: 'block production incl. atomic RocksDB commit',
      value: `${Math.round(n / ((t2 - t0) / 1000)).toLocaleString()} tx/s`,
      note: `commit ${(t2 - t1).toFixed(0)} ms`,
    },
    {
      name: `block import by a peer: ${n.toLocaleString()} transfers (all rules, ${n.toLocaleString()} signatures, re-execution, commit)`,
      value: `${Math.round(n / ((t4 - t3) / 1000)).toLocaleString()} tx/s`,
      note: `${(t4 - t3).toFixed(0)} ms`,
    },
  ];
}
