/**
 * The differential check of parallel execution (issue 27 section 3; docs/evm.md "Parallel execution"): random
 * blocks, seeded, each executed sequentially and in parallel by a producer, and imported by a second node in
 * parallel; every byte compared (the block with its state root, receipts root and bloom, the encoded receipts,
 * the state changes in order, the dropped and deferred transactions). The test runs a few hundred blocks
 * (test/execution/parallel-diff.test.ts), the bench thousands (bench/evm-parallel.ts, BENCH_DIFF_BLOCKS).
 *
 * The blocks mix independent value and ERC-20 transfers, a hot counter, per-sender slots that conflict only when
 * senders meet, nested calls between two contracts that conflict only sometimes, reverts (caught and not),
 * contract creation (CREATE and CREATE2, colliding salts), self-destruct (in the constructor and later),
 * BLOCKHASH, refused transactions (a nonce gap, a balance short) and native transfers between them, with senders
 * sending several transactions in one block.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppliedBlock } from '../ts/chain/validate-block.js';
import { configureParallelExecution, lastParallelStats, type ParallelOptions, readyWorkers } from '../ts/execution/index.js';
import { keyPairFromPrivate, type KeyPair } from '../ts/ledger/keys.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { getAccount } from '../ts/state/index.js';
import { to0x, toHex } from '../ts/util/hex.js';
import { CHAIN_ID, type DevChain, EvmSender, callData, deployData, devParams, openChain } from './evm-fixtures.js';

/** A small seeded generator (mulberry32): the same seed gives the same blocks on every machine. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const E18 = 10n ** 18n;

/** Everything of an applied block that must not differ between the two ways, as one string per part. */
export function blockBytes(a: AppliedBlock): Record<string, string> {
  const json = (v: unknown) =>
    JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? toHex(x) : x));
  return {
    block: json(a.block),
    receipts: toHex(a.encodedReceipts),
    changes: json([...a.changes].map(([k, v]) => [Buffer.from(k, 'latin1').toString('hex'), v === null ? null : toHex(v)])),
    dropped: json(a.result.dropped.map((d) => [d.tx.txid, d.reason])),
    deferred: json(a.result.deferred.map((t) => t.txid)),
    result: json({ ...a.result, included: a.result.included.map((t) => t.txid), dropped: 0, deferred: 0 }),
  };
}

interface World {
  producer: DevChain;
  importer: DevChain;
  evm: EvmSender[];
  native: KeyPair[];
  nativeNonce: bigint[];
  token: string;
  mixes: string[];
  children: string[];
  dirs: string[];
}

/** A random transaction of the mix. */
function randomTx(w: World, rnd: () => number, height: number): SignedTransaction {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const r = rnd();
  if (r < 0.12) {
    const i = Math.floor(rnd() * w.native.length);
    const to = rnd() < 0.7 ? pick(w.evm).address : pick(w.native).address;
    return signTransaction(
      {
        from: w.native[i].address,
        to,
        amount: 1_000n + BigInt(Math.floor(rnd() * 1000)),
        fee: 10_000n,
        nonce: w.nativeNonce[i]++,
        chain_id: CHAIN_ID,
        timestamp: 1_700_000_000 + height,
      },
      w.native[i],
    );
  }
  const s = pick(w.evm);
  const v = BigInt(Math.floor(rnd() * 40));
  const mix = pick(w.mixes);
  const other = pick(w.mixes);
  const c = (fn: string, args: unknown[] = [], opts?: { gas?: bigint; value?: bigint }) =>
    s.tx(mix, callData('ParMix', fn, args), opts);
  if (r < 0.24) return s.tx(pick(w.evm).address, new Uint8Array(0), { gas: 21_000n, value: 1n + v });
  if (r < 0.4) return s.tx(w.token, callData('Token', 'transfer', [pick(w.evm).address, 1n + v]), { gas: 60_000n });
  if (r < 0.48) return c('bump');
  if (r < 0.56) return c('mark', [v]);
  if (r < 0.64) return c('poke', [other, v]);
  if (r < 0.7) return c('fail', [v]);
  if (r < 0.75) return c('pokeTry', [other, v]);
  if (r < 0.8) return c('spawn', [BigInt(Math.floor(rnd() * 8)), rnd() < 0.5], { gas: 300_000n, value: v });
  if (r < 0.84) return s.tx(undefined, deployData('ParChild', [rnd() < 0.3]), { gas: 300_000n, value: v });
  if (r < 0.87 && w.children.length > 0) return s.tx(pick(w.children), callData('ParChild', 'kill', [s.address]));
  if (r < 0.9) return c('spin', [v * 10n]);
  if (r < 0.92) return c('seeHash');
  if (r < 0.94) return c('pay', [pick(w.evm).address], { value: v });
  if (r < 0.96) return s.tx(mix, new Uint8Array(0), { gas: 50_000n, value: 1n }); // no receive(): reverts
  if (r < 0.98) return s.tx(pick(w.evm).address, new Uint8Array(0), { gas: 21_000n, value: 10n ** 30n }); // refused: balance
  // Refused: a nonce gap (the sender's next transactions stay valid).
  const next = s.nonce;
  s.nonce += 5n;
  const gap = s.tx(pick(w.evm).address, new Uint8Array(0), { gas: 21_000n, value: 1n });
  s.nonce = next;
  return gap;
}

export interface DiffStats {
  blocks: number;
  txs: number;
  committed: number;
  conflicts: number;
  misses: number;
  late: number;
}

export interface DiffOptions {
  seed: number;
  blocks: number;
  /** Transactions per block: 1 to this many. */
  maxTxs: number;
  /** Parallel execution's options for the parallel runs (minTxs, workers, mainShare). */
  parallel: Partial<ParallelOptions>;
  /** Every n-th block the main thread awaits the workers' results (every path taken whatever the load); 0: never. */
  awaitEvery: number;
}

/** Where the two ways differ: the block, the part, and the first differing characters. */
export class DifferenceError extends Error {}

function compare(height: number, what: string, a: Record<string, string>, b: Record<string, string>, parts: string[]): void {
  for (const part of parts) {
    const x = a[part];
    const y = b[part];
    if (x === y) continue;
    let i = 0;
    while (i < x.length && x[i] === y[i]) i++;
    throw new DifferenceError(
      `block ${height}: ${what}: ${part} differs at ${i}: ${x.slice(Math.max(0, i - 80), i + 80)} <> ${y.slice(Math.max(0, i - 80), i + 80)}`,
    );
  }
}

async function setup(seed: number): Promise<{ w: World; validator: KeyPair }> {
  const validator = keyPairFromPrivate('77'.repeat(32));
  const evm = Array.from(
    { length: 24 },
    (_, i) => new EvmSender(keyPairFromPrivate((BigInt(i) + 0x1000n).toString(16).padStart(64, '0'))),
  );
  const native = Array.from({ length: 6 }, (_, i) => keyPairFromPrivate((BigInt(i) + 0x2000n).toString(16).padStart(64, '0')));
  const params = devParams(validator, [...evm.map((s) => s.address), ...native.map((k) => k.address)]);
  const dirs = [mkdtempSync(join(tmpdir(), `native-par-p${seed}-`)), mkdtempSync(join(tmpdir(), `native-par-i${seed}-`))];
  const producer = await openChain(dirs[0], params, validator, 64);
  const importer = await openChain(dirs[1], params, validator, 64);
  const w: World = {
    producer,
    importer,
    evm,
    native,
    nativeNonce: native.map(() => 0n),
    token: '',
    mixes: [],
    children: [],
    dirs,
  };
  const d = evm[0];
  const created = await both(w, validator, [
    d.tx(undefined, deployData('Token', ['Par', 'PAR', 10n ** 30n])),
    d.tx(undefined, deployData('ParMix')),
    d.tx(undefined, deployData('ParMix')),
  ]);
  [w.token, ...w.mixes] = created;
  await both(
    w,
    validator,
    evm.slice(1).map((s) => d.tx(w.token, callData('Token', 'transfer', [s.address, 1000n * E18]))),
  );
  return { w, validator };
}

/** A block made and committed by the producer and imported by the importer, whatever the switch says. */
async function both(w: World, validator: KeyPair, txs: SignedTransaction[]): Promise<string[]> {
  const p = await w.producer.chain.propose(txs, validator, w.producer.chain.head.timestamp + 1);
  await w.producer.chain.commit(p);
  await w.importer.chain.importBlock(p.block);
  return committed(w, p);
}

/** After a block's commit: the senders' nonces from the state (refused transactions left gaps), the new contracts. */
function committed(w: World, p: AppliedBlock): string[] {
  const created = p.result.receipts.flatMap((r) => (r.contractAddress ? [to0x(r.contractAddress)] : []));
  w.children.push(...created);
  if (w.children.length > 16) w.children.splice(0, w.children.length - 16);
  for (const s of w.evm) s.nonce = getAccount(w.producer.chain.state, s.address).nonce;
  w.nativeNonce = w.native.map((k) => getAccount(w.producer.chain.state, k.address).nonce);
  return created;
}

/**
 * Runs `blocks` random blocks both ways and throws DifferenceError at the first byte that differs. Parallel
 * execution is left off.
 */
export async function runDifferential(o: DiffOptions): Promise<DiffStats> {
  await configureParallelExecution(null);
  const rnd = seeded(o.seed);
  const { w, validator } = await setup(o.seed);
  const stats: DiffStats = { blocks: 0, txs: 0, committed: 0, conflicts: 0, misses: 0, late: 0 };
  try {
    await configureParallelExecution(o.parallel);
    // The workers load (~0.3 s each) before the first block, so every block has them.
    const loaded = Date.now() + 60_000;
    while (readyWorkers() < Math.min(o.parallel.workers ?? 1, 2) && Date.now() < loaded)
      await new Promise((r) => setTimeout(r, 20));
    if (readyWorkers() === 0) throw new Error('no speculation worker started within 60 s');
    for (let b = 0; b < o.blocks; b++) {
      const height = w.producer.chain.height + 1;
      const n = 1 + Math.floor(rnd() * o.maxTxs);
      const txs = Array.from({ length: n }, () => randomTx(w, rnd, height));
      const ts = w.producer.chain.head.timestamp + 1;
      await configureParallelExecution(null);
      const seq = await w.producer.chain.propose(txs, validator, ts);
      const seqBytes = blockBytes(seq);
      w.producer.chain.abandon(seq);
      // Awaited blocks also ignore hot contracts (docs/evm.md): every path is taken there whatever came before.
      const awaited = o.awaitEvery > 0 && b % o.awaitEvery === 0;
      await configureParallelExecution({ ...o.parallel, awaitWorkers: awaited, ...(awaited ? { hotBlocks: 0 } : {}) });
      const before = lastParallelStats();
      const par = await w.producer.chain.propose(txs, validator, ts);
      const ran = lastParallelStats();
      if (ran !== before && ran) {
        stats.committed += ran.committed;
        stats.conflicts += ran.conflicts;
        stats.misses += ran.misses;
        stats.late += ran.late;
      }
      compare(height, 'producer, parallel vs sequential', seqBytes, blockBytes(par), Object.keys(seqBytes));
      const imported = await w.importer.chain.importBlock(par.block);
      compare(height, 'importer (parallel) vs producer (sequential)', seqBytes, blockBytes(imported), [
        'block',
        'receipts',
        'changes',
      ]);
      await configureParallelExecution(null);
      await w.producer.chain.commit(par);
      committed(w, par);
      stats.blocks++;
      stats.txs += n;
    }
    return stats;
  } finally {
    await w.producer.close();
    await w.importer.close();
    for (const d of w.dirs) rmSync(d, { recursive: true, force: true });
  }
}
