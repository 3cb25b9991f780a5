/**
 * Native transfers, SRC-20 transfers, SRC-721 transfers and mints side by side in block execution
 * (execute + state root, `Chain.propose` timings), on one chain: the same 10,000-transaction block of
 * each kind is proposed and abandoned again, round after round, alternating kinds, so every kind sees
 * the same state, the same warm JIT and the same load from other processes. The ratio to native
 * transfers of the same round is the steadier number on a shared machine.
 *
 * Transactions are as admission leaves them (rules checked, signature marked verified, as bench/nft.ts).
 * Usage: `npm run bench:ops` or `node dist/bench/operations-exec.js [rounds]`; `BENCH_KINDS=nft,native` picks
 * kinds (one kind alone for `node --cpu-prof`); `BENCH_BASELINE=.tmp/baseline` (scripts/bench-baseline.sh)
 * runs an earlier build's chain in the same process, interleaved round by round, for before/after rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as ChainModule from '../ts/chain/chain.js';
import type { KeyPair } from '../ts/ledger/keys.js';
import type * as NftModule from '../ts/modules/index.js';
import type * as RulesModule from '../ts/ledger/rules.js';
import type * as TokensModule from '../ts/modules/index.js';
import type * as TxModule from '../ts/ledger/transaction.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import type * as StorageModule from '../ts/storage/index.js';
import type * as HexModule from '../ts/util/hex.js';
import type * as JsonModule from '../ts/util/json.js';
import { benchChainParams, senderKeys } from './fixtures.js';

const TS = 1_700_000_001;
const ZERO = `0x${'00'.repeat(20)}`;
const HOLDERS = 2_000;
const PER_HOLDER = 5;
const BLOCK = HOLDERS * PER_HOLDER;
const MINTERS = 100;

export type ExecKind = 'native' | 'src20' | 'nft' | 'mint';
const ALL_KINDS: ExecKind[] = ['native', 'src20', 'nft', 'mint'];

/** The node's modules from a build (this one, or a baseline's `dist`). */
async function loadBuild(dist: string) {
  const m = async <T>(path: string): Promise<T> => (await import(join(dist, 'ts', path))) as T;
  const rules = await m<typeof RulesModule>('ledger/rules.js');
  // The native modules moved from ts/ledger to ts/modules (issue 24): a baseline built before has them there.
  const modules = await m<Partial<typeof NftModule>>('modules/index.js').catch(() => ({}) as Partial<typeof NftModule>);
  return {
    Chain: (await m<typeof ChainModule>('chain/chain.js')).Chain,
    collectionAddress: modules.collectionAddress ?? (await m<typeof NftModule>('ledger/nft/index.js')).collectionAddress,
    tokenContractAddress:
      modules.tokenContractAddress ?? (await m<typeof TokensModule>('ledger/tokens/index.js')).tokenContractAddress,
    checkNativeTransaction: rules.checkNativeTransaction,
    markSignatureVerified: rules.markSignatureVerified,
    signingDigest: (await m<typeof TxModule>('ledger/transaction.js')).signingDigest,
    openRocksStore: (await m<typeof StorageModule>('storage/index.js')).openRocksStore,
    toHex: (await m<typeof HexModule>('util/hex.js')).toHex,
    stringifyExact: (await m<typeof JsonModule>('util/json.js')).stringifyExact,
  };
}
type Build = Awaited<ReturnType<typeof loadBuild>>;

/** A chain with a token spread to 2,000 holders, 5 NFTs each, 100 minters' collections, and one block of each kind. */
async function prepare(b: Build, keys: KeyPair[], dir: string) {
  const validator = keys[HOLDERS];
  const holders = keys.slice(0, HOLDERS);
  const owner = holders[0];
  const db = await b.openRocksStore(dir);
  const chain = new b.Chain(benchChainParams(validator, holders), db, 1000);
  await chain.open();
  chain.now = () => TS;
  const admitted = (key: KeyPair, nonce: bigint, to: string, amount: bigint, data: string, fee = 10_000n) => {
    const body = { from_address: key.address, to_address: to, amount, fee, nonce, data, timestamp: TS, chain_id: 7120 };
    const tx: SignedTransaction = {
      ...body,
      txid: b.toHex(b.signingDigest(body)),
      signature: '00'.repeat(64),
      public_key: b.toHex(key.publicKey),
    };
    b.checkNativeTransaction(tx, chain.txRuleContext(chain.height + 1, TS));
    b.markSignatureVerified(tx);
    return tx;
  };
  const op = (name: string, fields: Record<string, unknown>, key: KeyPair, nonce: bigint, fee?: bigint) =>
    admitted(key, nonce, ZERO, 0n, b.stringifyExact({ [name]: fields }), fee);
  const nonces = new Map<string, bigint>();
  const next = (k: KeyPair): bigint => {
    const n = nonces.get(k.address) ?? 0n;
    nonces.set(k.address, n + 1n);
    return n;
  };
  const commit = async (txs: SignedTransaction[]) => {
    const p = await chain.propose(txs, validator, TS);
    if (p.result.receipts.some((r) => r.status !== 1) || p.block.tx_count !== txs.length) throw new Error('setup failed');
    await chain.commit(p);
  };
  const contract = b.tokenContractAddress(owner.address, 0n);
  const collection = b.collectionAddress(owner.address, 1n);
  const nftDeploy = (k: KeyPair) => ({
    name: 'B',
    symbol: 'B',
    max_supply: 0,
    royalty_bps: 0,
    royalty_recipient: k.address,
    base_uri: 'ipfs://b',
  });
  await commit([
    op('Deploy', { name: 'B', symbol: 'B', decimals: 0, supply: 10n ** 12n, max_supply: 0 }, owner, next(owner), 100_000n),
    op('DeployNft', nftDeploy(owner), owner, next(owner), 100_000n),
  ]);
  await commit(holders.slice(1).map((h) => op('Transfer', { contract, to: h.address, amount: 1_000_000 }, owner, next(owner))));
  // Token ids j * HOLDERS + i + 1 go to holder i.
  const mints: SignedTransaction[] = [];
  for (let j = 0; j < PER_HOLDER; j++)
    for (const h of holders) mints.push(op('MintNft', { collection, to: h.address }, owner, next(owner)));
  await commit(mints);
  const minters = holders.slice(1, MINTERS + 1);
  const own = minters.map((k) => b.collectionAddress(k.address, nonces.get(k.address) ?? 0n));
  await commit(minters.map((k) => op('DeployNft', nftDeploy(k), k, next(k), 100_000n)));

  // The measured blocks: proposed, then abandoned (never committed), so nonces and state stay.
  const blocks: Record<ExecKind, SignedTransaction[]> = { native: [], src20: [], nft: [], mint: [] };
  for (let j = 0; j < PER_HOLDER; j++)
    holders.forEach((h, i) => {
      const to = holders[(i + 1) % HOLDERS].address;
      const nonce = (nonces.get(h.address) ?? 0n) + BigInt(j);
      blocks.native.push(admitted(h, nonce, to, 7n, ''));
      blocks.src20.push(op('Transfer', { contract, to, amount: 7 }, h, nonce));
      blocks.nft.push(op('TransferNft', { collection, token_id: j * HOLDERS + i + 1, to }, h, nonce));
    });
  // 100 automatic-id mints from each minter, interleaved by nonce (bench/nft.ts's mint block).
  for (let j = 0; j < BLOCK / MINTERS; j++)
    minters.forEach((k, i) => {
      const to = holders[(i * (BLOCK / MINTERS) + j) % HOLDERS].address;
      blocks.mint.push(op('MintNft', { collection: own[i], to }, k, (nonces.get(k.address) ?? 0n) + BigInt(j)));
    });
  // Chain.propose in its two steps, to time the execution's CPU as well (steadier than wall time under load).
  const run = async (kind: ExecKind): Promise<Sample> => {
    const c0 = cpuMs();
    const exec = await chain.execute(blocks[kind], validator.address, TS);
    const cpu = cpuMs() - c0;
    const p = chain.seal(exec, validator);
    if (p.result.receipts.some((x) => x.status !== 1) || p.block.tx_count !== BLOCK) throw new Error(`${kind}: failed`);
    chain.abandon(p);
    return { ms: p.timings.executeMs + p.timings.stateRootMs, executeCpuMs: cpu };
  };
  return { run, close: () => db.close() };
}

interface Sample {
  /** Execute + state root, wall time. */
  ms: number;
  /** CPU time of the process while executing (user + system). */
  executeCpuMs: number;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export interface ExecRow {
  build: string;
  kind: ExecKind;
  /** Median tx/s over the rounds. */
  rate: number;
  rates: number[];
  /** Median over rounds of this kind's time / native's time in the same round and build. */
  nativeRatio: number | null;
  /** Median CPU time of execution per transaction (µs), and its ratio to native's as above. */
  executeCpuUs: number;
  cpuNativeRatio: number | null;
}

/** `rounds` rounds (after a warm-up one); in each, every build runs every kind once. */
export async function benchOperationsExec(
  rounds: number,
  opts: { kinds?: ExecKind[]; baseline?: string } = {},
): Promise<ExecRow[]> {
  const kinds = opts.kinds ?? ALL_KINDS;
  const keys = senderKeys(HOLDERS + 1);
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-ops-'));
  const builds: [string, Build][] = [['after', await loadBuild(resolve(fileURLToPath(import.meta.url), '../..'))]];
  if (opts.baseline) builds.unshift(['before', await loadBuild(resolve(opts.baseline, 'dist'))]);
  const chains = [];
  for (const [label, b] of builds) chains.push({ label, ...(await prepare(b, keys, join(dir, label))) });
  const ms = new Map<string, Sample[]>();
  try {
    for (let r = -1; r < rounds; r++)
      for (const c of chains)
        for (const kind of kinds) {
          const t = await c.run(kind);
          if (r >= 0) ms.set(`${c.label}|${kind}`, [...(ms.get(`${c.label}|${kind}`) ?? []), t]);
        }
  } finally {
    for (const c of chains) await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const rows: ExecRow[] = [];
  for (const c of chains)
    for (const kind of kinds) {
      const s = ms.get(`${c.label}|${kind}`) as Sample[];
      const native = kind === 'native' ? undefined : ms.get(`${c.label}|native`);
      const t = s.map((x) => x.ms);
      rows.push({
        build: c.label,
        kind,
        rate: Math.round(BLOCK / (median(t) / 1000)),
        rates: t.map((x) => Math.round(BLOCK / (x / 1000))),
        nativeRatio: native ? median(s.map((x, i) => native[i].ms / x.ms)) : null,
        executeCpuUs: (median(s.map((x) => x.executeCpuMs)) * 1000) / BLOCK,
        cpuNativeRatio: native ? median(s.map((x, i) => native[i].executeCpuMs / x.executeCpuMs)) : null,
      });
    }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rounds = Number(process.argv[2] ?? 7);
  const load0 = loadavg()[0].toFixed(2);
  const rows = await benchOperationsExec(rounds, {
    ...(process.env.BENCH_KINDS ? { kinds: process.env.BENCH_KINDS.split(',') as ExecKind[] } : {}),
    ...(process.env.BENCH_BASELINE ? { baseline: process.env.BENCH_BASELINE } : {}),
  });
  for (const r of rows)
    console.log(
      `${r.build} ${r.kind}: ${r.rate.toLocaleString()} tx/s median${r.nativeRatio === null ? '' : `, ${(100 * r.nativeRatio).toFixed(0)}% of native`}; execute CPU ${r.executeCpuUs.toFixed(2)} µs/tx${r.cpuNativeRatio === null ? '' : ` (native's is ${(100 * r.cpuNativeRatio).toFixed(0)}% of it)`} (rounds ${r.rates.map((x) => x.toLocaleString()).join(' / ')})`,
    );
  console.log(`load ${load0} at start, ${loadavg()[0].toFixed(2)} at end`);
}
