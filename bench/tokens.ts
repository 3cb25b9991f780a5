/**
 * SRC-20 transfers against native transfers through the whole block path (`npm run bench:tokens`): block
 * production (execute, state root, transactions and receipts roots, the block-validity check), the atomic
 * RocksDB commit (receipts with their events, the event index) and the import of the same block by a peer
 * (decoded from its bytes: every rule, every signature, re-execution, commit). Both kinds have the same
 * shape (N senders, each sending to the next one), run alternately in one process on fresh chains.
 *
 * `BENCH_BASELINE=<dir>` (scripts/bench-baseline.sh) runs the same measurements against an earlier build
 * in the same process run, for before/after rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as ChainModule from '../ts/chain/chain.js';
import type * as BlockModule from '../ts/chain/block.js';
import type * as CryptoModule from '../ts/crypto/index.js';
import type { KeyPair } from '../ts/ledger/keys.js';
import type * as RulesModule from '../ts/ledger/rules.js';
import type * as TokensModule from '../ts/modules/index.js';
import type * as TxModule from '../ts/ledger/transaction.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import type * as StorageModule from '../ts/storage/index.js';
import type * as HexModule from '../ts/util/hex.js';
import { benchChainParams, senderKeys } from './fixtures.js';

export interface Row {
  name: string;
  value: string;
  note: string;
}

/** The node's modules from a build (this one, or a baseline's `dist`). */
interface Build {
  Chain: typeof ChainModule.Chain;
  decodeBlock: typeof BlockModule.decodeBlock;
  encodeBlock: typeof BlockModule.encodeBlock;
  crypto: typeof CryptoModule.crypto;
  checkNativeTransaction: typeof RulesModule.checkNativeTransaction;
  markSignatureVerified: typeof RulesModule.markSignatureVerified;
  tokenContractAddress: typeof TokensModule.tokenContractAddress;
  signTransaction: typeof TxModule.signTransaction;
  openRocksStore: typeof StorageModule.openRocksStore;
  fromHex: typeof HexModule.fromHex;
}

async function loadBuild(dist: string): Promise<Build> {
  const m = async <T>(path: string): Promise<T> => (await import(join(dist, 'ts', path))) as T;
  const block = await m<typeof BlockModule>('chain/block.js');
  const rules = await m<typeof RulesModule>('ledger/rules.js');
  return {
    Chain: (await m<typeof ChainModule>('chain/chain.js')).Chain,
    decodeBlock: block.decodeBlock,
    encodeBlock: block.encodeBlock,
    crypto: (await m<typeof CryptoModule>('crypto/index.js')).crypto,
    checkNativeTransaction: rules.checkNativeTransaction,
    markSignatureVerified: rules.markSignatureVerified,
    // The native modules moved from ts/ledger to ts/modules (issue 24): a baseline built before has them there.
    tokenContractAddress:
      (await m<Partial<typeof TokensModule>>('modules/index.js').catch(() => ({}) as Partial<typeof TokensModule>))
        .tokenContractAddress ?? (await m<typeof TokensModule>('ledger/tokens/index.js')).tokenContractAddress,
    signTransaction: (await m<typeof TxModule>('ledger/transaction.js')).signTransaction,
    openRocksStore: (await m<typeof StorageModule>('storage/index.js')).openRocksStore,
    fromHex: (await m<typeof HexModule>('util/hex.js')).fromHex,
  };
}

const ZERO = `0x${'00'.repeat(20)}`;
const TS = 1_700_000_000;
const TOKENS_EACH = 1_000_000n;

export type Kind = 'native' | 'SRC-20';

interface Timings {
  /** Wall times; the `Cpu` fields are the process's CPU time (user + system), steadier under load. */
  produceMs: number;
  produceCpuMs: number;
  commitCpuMs: number;
  importCpuMs: number;
  executeMs: number;
  stateRootMs: number;
  commitMs: number;
  importMs: number;
  included: number;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One run: fresh chains, the token deployed and spread to every sender, then one measured block. */
async function runOnce(b: Build, kind: Kind, keys: KeyPair[], perSender: number): Promise<Timings> {
  const validator = keys[keys.length - 1];
  const senders = keys.slice(0, -1);
  const params = benchChainParams(validator, senders);
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-tokens-'));
  const db = await b.openRocksStore(join(dir, 'a'));
  const db2 = await b.openRocksStore(join(dir, 'b'));
  try {
    const chain = new b.Chain(params, db, 1000);
    const peer = new b.Chain(params, db2, 1000);
    await chain.open();
    await peer.open();
    let ts = TS + 1;
    chain.now = () => ts;
    peer.now = () => ts;
    const sign = (k: KeyPair, nonce: bigint, to: string, amount: bigint, data = '', fee = 10_000n) =>
      b.signTransaction({ from: k.address, to, amount, fee, nonce, data, chain_id: 7120, timestamp: TS }, k);
    const admit = (txs: SignedTransaction[]) => {
      const rules = chain.txRuleContext(chain.height + 1, ts);
      const digests = txs.map((tx) => b.checkNativeTransaction(tx, rules).digest);
      const ok = b.crypto().verifyBatch(
        txs.map((tx) => b.fromHex(tx.signature)),
        digests,
        txs.map((tx) => b.fromHex(tx.public_key)),
      );
      ok.forEach((good, i) => good && b.markSignatureVerified(txs[i]));
    };
    const block = async (txs: SignedTransaction[]) => {
      admit(txs);
      const p = await chain.propose(txs, validator, ts);
      await chain.commit(p);
      await peer.importBlock(b.decodeBlock(b.encodeBlock(p.block)));
      ts++;
    };
    // Setup (both kinds, so heights and senders' nonces match): the deploy, then the token to every sender.
    const owner = senders[0];
    const contract = b.tokenContractAddress(owner.address, 0n);
    const op = (body: unknown) => JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    const supply = TOKENS_EACH * BigInt(senders.length);
    await block([
      sign(owner, 0n, ZERO, 0n, op({ Deploy: { name: 'Bench', symbol: 'BEN', decimals: 0, supply, max_supply: 0 } }), 100_000n),
    ]);
    await block(
      senders
        .slice(1)
        .map((k, i) => sign(owner, BigInt(i + 1), ZERO, 0n, op({ Transfer: { contract, to: k.address, amount: TOKENS_EACH } }))),
    );
    const base = (k: KeyPair) => (k === owner ? BigInt(senders.length) : 0n);
    const txs: SignedTransaction[] = [];
    for (let n = 0; n < perSender; n++)
      senders.forEach((k, i) => {
        const to = senders[(i + 1) % senders.length].address;
        const nonce = base(k) + BigInt(n);
        txs.push(
          kind === 'native' ? sign(k, nonce, to, 7n) : sign(k, nonce, ZERO, 0n, op({ Transfer: { contract, to, amount: 7 } })),
        );
      });
    admit(txs);
    const c0 = cpuMs();
    const t0 = performance.now();
    const p = await chain.propose(txs, validator, ts);
    const t1 = performance.now();
    const c1 = cpuMs();
    await chain.commit(p);
    const t2 = performance.now();
    const c2 = cpuMs();
    const received = b.decodeBlock(b.encodeBlock(p.block));
    const c3 = cpuMs();
    const t3 = performance.now();
    await peer.importBlock(received);
    const t4 = performance.now();
    const c4 = cpuMs();
    const failed = p.result.receipts.filter((r) => r.status !== 1).length;
    if (failed || p.block.tx_count !== txs.length) throw new Error(`${kind}: ${failed} failed, ${p.block.tx_count} included`);
    return {
      produceMs: t1 - t0,
      produceCpuMs: c1 - c0,
      commitCpuMs: c2 - c1,
      importCpuMs: c4 - c3,
      executeMs: p.timings.executeMs,
      stateRootMs: p.timings.stateRootMs,
      commitMs: t2 - t1,
      importMs: t4 - t3,
      included: p.block.tx_count,
    };
  } finally {
    await db.close();
    await db2.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const rate = (n: number, ms: number): string => `${Math.round(n / (ms / 1000)).toLocaleString()} tx/s`;

/**
 * Native and SRC-20 transfers through production, commit and import, `runs` times each, alternating (and
 * alternating with a baseline build when one is given); rows give medians.
 */
export async function benchTokenPipeline(
  opts: { senders?: number; perSender?: number; runs?: number; baseline?: string; kinds?: Kind[] } = {},
) {
  const kinds = opts.kinds ?? (['native', 'SRC-20'] as Kind[]);
  const senders = opts.senders ?? 2000;
  const perSender = opts.perSender ?? 5;
  const runs = opts.runs ?? 3;
  const keys = senderKeys(senders + 1);
  const builds: [string, Build][] = [['after', await loadBuild(resolve(fileURLToPath(import.meta.url), '../..'))]];
  if (opts.baseline) builds.unshift(['before', await loadBuild(resolve(opts.baseline, 'dist'))]);
  const results = new Map<string, Timings[]>();
  // One untimed round of each first: the JIT warms up on every path.
  for (const [, b] of builds) for (const kind of kinds) await runOnce(b, kind, keys, 1);
  for (let r = 0; r < runs; r++)
    for (const [label, b] of builds)
      for (const kind of kinds) {
        const t = await runOnce(b, kind, keys, perSender);
        const k = `${label}|${kind}`;
        results.set(k, [...(results.get(k) ?? []), t]);
      }
  const rows: Row[] = [];
  for (const [label] of builds)
    for (const kind of kinds) {
      const ts = results.get(`${label}|${kind}`) as Timings[];
      const n = ts[0].included;
      const tag = builds.length > 1 ? ` [${label}]` : '';
      const m = (f: (t: Timings) => number) => median(ts.map(f));
      const line = (stage: string, wall: (t: Timings) => number, cpu: (t: Timings) => number, note: string): Row => ({
        name: `${kind} transfers${tag}: ${stage}`,
        value: rate(n, m(wall)),
        note: `${Number.isNaN(m(cpu)) ? '' : `${((m(cpu) * 1000) / n).toFixed(1)} µs CPU per tx; `}${note}; median of ${ts.length}`,
      });
      rows.push(
        line(
          'block execution (execute + state root)',
          (t) => t.executeMs + t.stateRootMs,
          () => Number.NaN,
          'the transactions applied in the block executor and the state root',
        ),
        line(
          'block production (execute + state root + roots + validity check)',
          (t) => t.produceMs,
          (t) => t.produceCpuMs,
          `${n.toLocaleString()} transfers; execute ${m((t) => t.executeMs).toFixed(0)} ms, state root ${m((t) => t.stateRootMs).toFixed(0)} ms`,
        ),
        line(
          'production incl. atomic RocksDB commit (receipts, event index)',
          (t) => t.produceMs + t.commitMs,
          (t) => t.produceCpuMs + t.commitCpuMs,
          `commit ${m((t) => t.commitMs).toFixed(0)} ms`,
        ),
        line(
          'block import by a peer (decode, all rules and signatures, re-execution, commit)',
          (t) => t.importMs,
          (t) => t.importCpuMs,
          `${m((t) => t.importMs).toFixed(0)} ms`,
        ),
      );
    }
  return rows;
}

const isMain = process.argv[1]?.endsWith('tokens.js');
if (isMain) {
  const rows = await benchTokenPipeline({
    runs: Number(process.env.BENCH_RUNS ?? 3),
    ...(process.env.BENCH_BASELINE ? { baseline: process.env.BENCH_BASELINE } : {}),
    ...(process.env.BENCH_KINDS ? { kinds: process.env.BENCH_KINDS.split(',') as Kind[] } : {}),
  });
  for (const r of rows) console.log(`| ${r.name} | ${r.value} | ${r.note} |`);
}
