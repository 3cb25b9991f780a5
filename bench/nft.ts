/**
 * SRC-721 benchmarks: NFT mints and transfers per second in block execution (execute + state root, as the
 * "Block execution" rows measure native transfers, which run here side by side), and the cost of
 * GET /nft/address/{a} for an owner of 100,000 tokens (paginated), through the service and over HTTP.
 *
 * Transactions carry their real txid and public key but a placeholder signature marked as verified:
 * what admission hands to block production (signatures are checked there, in batches, and never again),
 * without spending minutes signing 150,000 transactions in JS.
 * Usage: `npm run bench:nft` (writes the "NFTs (SRC-721)" section of bench/RESULTS.md).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiHandler, restRoutes } from '../ts/api/index.js';
import { Chain } from '../ts/chain/chain.js';
import { startHttpServer } from '../ts/http/index.js';
import { type KeyPair, randomKeyPair } from '../ts/ledger/keys.js';
import { NftIndex, collectionAddress } from '../ts/modules/index.js';
import { checkNativeTransaction, markSignatureVerified } from '../ts/ledger/rules.js';
import { type SignedTransaction, signingDigest } from '../ts/ledger/transaction.js';
import { ZERO_ADDRESS } from '../ts/modules/kit/units.js';
import { type NodeContext, nftTokensOf } from '../ts/services/index.js';
import type { StateUndo } from '../ts/state/state-store.js';
import { openRocksStore } from '../ts/storage/index.js';
import { toHex } from '../ts/util/hex.js';
import { stringifyExact } from '../ts/util/json.js';
import { benchChainParams, senderKeys } from './fixtures.js';
import type { Row } from './ledger.js';

const TS = 1_700_000_001;
const BLOCK = 10_000;
const MINTERS = 100;
const HOLDERS = 2_000;
const BIG_OWNER_TOKENS = 100_000;
const PAGE = 20;
const QUERIES = 2_000;

/** A transaction as admission leaves it: rules checked, signature verified (here: marked so). */
function admitted(
  chain: Chain,
  key: KeyPair,
  nonce: number,
  to: string,
  amount: bigint,
  data: string,
  fee = 10_000n,
): SignedTransaction {
  const body = {
    from_address: key.address,
    to_address: to,
    amount,
    fee,
    nonce: BigInt(nonce),
    data,
    timestamp: TS,
    chain_id: 7120,
  };
  const tx: SignedTransaction = {
    ...body,
    txid: toHex(signingDigest(body)),
    signature: '00'.repeat(64),
    public_key: toHex(key.publicKey),
  };
  checkNativeTransaction(tx, chain.txRuleContext(chain.height + 1, TS));
  markSignatureVerified(tx);
  return tx;
}

const nftOp = (chain: Chain, key: KeyPair, nonce: number, name: string, fields: Record<string, unknown>, fee?: bigint) =>
  admitted(chain, key, nonce, ZERO_ADDRESS, 0n, stringifyExact({ [name]: fields }), fee);

interface Timed {
  /** Keeping the NFT index up to date with the block (on commit, outside execute + state root). */
  indexMs: number;
  executeMs: number;
  /** Process CPU time while executing (user + system): steadier than wall time on a loaded machine. */
  executeCpuMs: number;
  rootMs: number;
  commitMs: number;
  included: number;
  failed: number;
}

/** The bench's own NFT index per chain, kept up to date block by block as a node keeps its index. */
const indexes = new WeakMap<Chain, NftIndex>();

async function block(chain: Chain, validator: KeyPair, txs: SignedTransaction[]): Promise<Timed> {
  // The index work a node does on commit, timed on the bench's index: built once per chain and then
  // updated after every block, as the node's (rebuilding a copy before every block, as this bench did
  // until 2026-11-24, left a whole index of garbage to collect during the next block's execution).
  let index = indexes.get(chain);
  if (!index) indexes.set(chain, (index = NftIndex.build(chain.state.entries())));
  let undo: StateUndo = new Map();
  const keep = (_b: unknown, _r: unknown, u: StateUndo) => {
    undo = u;
  };
  chain.on('block', keep);
  // Chain.propose in its two steps, to time the execution's CPU as well.
  const c0 = process.cpuUsage();
  const exec = await chain.execute(txs, validator.address, TS);
  const cpu = process.cpuUsage(c0);
  const p = chain.seal(exec, validator);
  const t1 = performance.now();
  await chain.commit(p);
  const t2 = performance.now();
  chain.off('block', keep);
  const t3 = performance.now();
  for (const [k, before] of undo) index.apply(k, before, chain.state.get(k));
  const indexMs = performance.now() - t3;
  return {
    indexMs,
    executeMs: p.timings.executeMs,
    executeCpuMs: (cpu.user + cpu.system) / 1000,
    rootMs: p.timings.stateRootMs,
    commitMs: t2 - t1,
    included: p.result.included.length,
    failed: p.result.receipts.filter((r) => r.status === 0).length,
  };
}

const rate = (n: number, ms: number): number => Math.round(n / (ms / 1000));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/**
 * Block execution of 10,000 mints, 10,000 transfers and 10,000 native transfers, interleaved: one
 * warm-up round (JIT, first allocations; not counted, as a running node is warm), then `rounds`.
 */
export async function benchNftExecution(rounds = 3): Promise<Row[]> {
  const keys = senderKeys(MINTERS + HOLDERS);
  const minters = keys.slice(0, MINTERS);
  const holders = keys.slice(MINTERS);
  const validator = randomKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-nft-'));
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(benchChainParams(validator, keys), db, 1000);
  await chain.open();
  chain.now = () => TS;
  const nonces = new Map<string, number>();
  const next = (k: KeyPair): number => {
    const n = nonces.get(k.address) ?? 0;
    nonces.set(k.address, n + 1);
    return n;
  };
  const collections = minters.map((k) => collectionAddress(k.address, 0n));
  const deploys = minters.map((k) =>
    nftOp(
      chain,
      k,
      next(k),
      'DeployNft',
      { name: 'Bench', symbol: 'B', max_supply: 0, royalty_bps: 0, royalty_recipient: k.address, base_uri: 'ipfs://b' },
      100_000n,
    ),
  );
  await block(chain, validator, deploys);

  const results = { mint: [] as Timed[], transfer: [] as Timed[], native: [] as Timed[] };
  for (let r = -1; r < rounds; r++) {
    const keep = <T>(list: T[], x: T) => r >= 0 && list.push(x);
    // 10,000 automatic-id mints: 100 per minter, interleaved by nonce, 5 to each holder.
    const mints: SignedTransaction[] = [];
    for (let j = 0; j < BLOCK / MINTERS; j++) {
      minters.forEach((k, i) => {
        const to = holders[(i * (BLOCK / MINTERS) + j) % HOLDERS].address;
        mints.push(nftOp(chain, k, next(k), 'MintNft', { collection: collections[i], to }));
      });
    }
    keep(results.mint, await block(chain, validator, mints));

    // 10,000 transfers: each holder sends 5 of its tokens to the next holder.
    const ctx = { chain } as unknown as NodeContext;
    const owned = await Promise.all(holders.map(async (h) => (await nftTokensOf(ctx, h.address, 0, BLOCK / HOLDERS)).tokens));
    const transfers: SignedTransaction[] = [];
    for (let j = 0; j < BLOCK / HOLDERS; j++) {
      holders.forEach((h, i) => {
        const tok = owned[i][j];
        const to = holders[(i + 1) % HOLDERS].address;
        transfers.push(nftOp(chain, h, next(h), 'TransferNft', { collection: tok.collection, token_id: tok.token_id, to }));
      });
    }
    keep(results.transfer, await block(chain, validator, transfers));

    // The same harness on 10,000 native transfers (5 per holder), for comparison.
    const natives: SignedTransaction[] = [];
    for (let j = 0; j < BLOCK / HOLDERS; j++) {
      for (const h of holders) natives.push(admitted(chain, h, next(h), `0x${'ab'.repeat(20)}`, 1_000n, ''));
    }
    keep(results.native, await block(chain, validator, natives));
  }
  await db.close();
  rmSync(dir, { recursive: true, force: true });

  const row = (name: string, runs: Timed[]): Row => {
    const rates = runs.map((x) => rate(x.included, x.executeMs + x.rootMs));
    const best = runs[rates.indexOf(median(rates))];
    const bad = runs.some((x) => x.included !== BLOCK || x.failed > 0);
    return {
      name,
      value: `${median(rates).toLocaleString()} tx/s`,
      note: `median of ${runs.length} blocks after a warm-up round (${rates.map((x) => x.toLocaleString()).join(' / ')}); execute ${best.executeMs.toFixed(0)} ms, state root ${best.rootMs.toFixed(0)} ms; execute CPU ${((1000 * median(runs.map((x) => x.executeCpuMs))) / BLOCK).toFixed(1)} µs/tx (median); after it: commit ${best.commitMs.toFixed(0)} ms, NFT index ${best.indexMs.toFixed(0)} ms${bad ? '; SOME FAILED' : ''}`,
    };
  };
  const mintRate = median(results.mint.map((x) => rate(x.included, x.executeMs + x.rootMs)));
  const transferRate = median(results.transfer.map((x) => rate(x.included, x.executeMs + x.rootMs)));
  const nativeRate = median(results.native.map((x) => rate(x.included, x.executeMs + x.rootMs)));
  const goal = Math.min(mintRate, transferRate) >= 30_000 ? 'met' : 'MISSED';
  const best = (runs: Timed[]) => Math.max(...runs.map((x) => rate(x.included, x.executeMs + x.rootMs)));
  return [
    row(
      `NFT mints: ${BLOCK.toLocaleString()} MintNft (automatic ids) from ${MINTERS} minters in one block (execute + state root)`,
      results.mint,
    ),
    row(
      `NFT transfers: ${BLOCK.toLocaleString()} TransferNft from ${HOLDERS.toLocaleString()} owners in one block (execute + state root)`,
      results.transfer,
    ),
    row(
      `native transfers, same harness: ${BLOCK.toLocaleString()} from ${HOLDERS.toLocaleString()} senders (execute + state root)`,
      results.native,
    ),
    {
      name: 'Goal: NFT mints and transfers >= 30,000/s in block execution',
      value: goal,
      note: `slower of the two (median): ${Math.min(mintRate, transferRate).toLocaleString()} tx/s, ${Math.round((100 * Math.min(mintRate, transferRate)) / nativeRate)}% of native transfers in the same run; best blocks: mints ${best(results.mint).toLocaleString()}, transfers ${best(results.transfer).toLocaleString()} tx/s`,
    },
  ];
}

/** GET /nft/address/{a} for an owner of 100,000 tokens: pages of 20 at random offsets, service and HTTP. */
export async function benchNftOwnerQuery(): Promise<Row[]> {
  const minter = senderKeys(1)[0];
  const owner = randomKeyPair().address;
  const validator = randomKeyPair();
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-nft-q-'));
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(benchChainParams(validator, [minter]), db, 1000);
  await chain.open();
  chain.now = () => TS;
  const c = collectionAddress(minter.address, 0n);
  const deploy = { name: 'Big', symbol: 'BIG', max_supply: 0, royalty_bps: 0, royalty_recipient: owner, base_uri: 'ipfs://big' };
  await block(chain, validator, [nftOp(chain, minter, 0, 'DeployNft', deploy, 100_000n)]);
  const t0 = performance.now();
  for (let n = 1; n <= BIG_OWNER_TOKENS; n += BLOCK) {
    const mints = Array.from({ length: BLOCK }, (_, i) => nftOp(chain, minter, n + i, 'MintNft', { collection: c, to: owner }));
    const b = await block(chain, validator, mints);
    if (b.included !== BLOCK || b.failed) throw new Error('setup mints failed');
  }
  const buildS = (performance.now() - t0) / 1000;
  const ctx = { chain } as unknown as NodeContext;
  let seed = 1;
  const offset = () => {
    seed = (seed * 48271) % 2147483647;
    return seed % (BIG_OWNER_TOKENS - PAGE);
  };
  const serviceMs: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const s = performance.now();
    const page = await nftTokensOf(ctx, owner, offset(), PAGE);
    serviceMs.push(performance.now() - s);
    if (page.tokens.length !== PAGE || page.total !== BIG_OWNER_TOKENS) throw new Error('wrong page');
  }
  const handlerSeconds: number[] = [];
  const handler = createApiHandler(ctx, restRoutes, {
    onResponse: (_m, route, status, seconds) => {
      if (route === '/nft/address/:addr' && status === 200) handlerSeconds.push(seconds);
    },
  });
  const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, handler);
  const httpMs: number[] = [];
  try {
    for (let i = 0; i < QUERIES; i++) {
      const s = performance.now();
      const res = await fetch(`http://127.0.0.1:${server.port}/nft/address/${owner}?offset=${offset()}&limit=${PAGE}`);
      const body = await res.text();
      httpMs.push(performance.now() - s);
      if (res.status !== 200 || body.length < 100) throw new Error(`HTTP ${res.status}`);
    }
  } finally {
    await server.close();
  }
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
  const warm = (xs: number[]) => xs.slice(100); // after 100 warm-up requests
  const fmt = (xs: number[]) => `${pct(warm(xs), 0.5).toFixed(3)} ms p50`;
  const handlerMs = handlerSeconds.map((s) => s * 1000);
  const p50 = pct(warm(httpMs), 0.5);
  return [
    {
      name: `GET /nft/address/{a}, owner of ${BIG_OWNER_TOKENS.toLocaleString()} tokens, limit ${PAGE} at random offsets: HTTP round trip`,
      value: fmt(httpMs),
      note: `p95 ${pct(warm(httpMs), 0.95).toFixed(3)} ms; ${QUERIES - 100} requests after 100 warm-up, sequential, fetch on 127.0.0.1 (client cost included); state built by ${BIG_OWNER_TOKENS.toLocaleString()} mints in ${BIG_OWNER_TOKENS / BLOCK} blocks, ${buildS.toFixed(1)} s`,
    },
    {
      name: '... the route handler alone (onResponse time)',
      value: fmt(handlerMs),
      note: `p95 ${pct(warm(handlerMs), 0.95).toFixed(3)} ms`,
    },
    {
      name: '... the service query alone (nftTokensOf)',
      value: fmt(serviceMs),
      note: `p95 ${pct(warm(serviceMs), 0.95).toFixed(3)} ms`,
    },
    {
      name: 'Goal: /nft/address/{a} <= 5 ms p50 for an owner of 100,000 tokens',
      value: p50 <= 5 ? 'met' : 'MISSED',
      note: `HTTP p50 ${p50.toFixed(3)} ms`,
    },
  ];
}

/** What the NFT rows measure (the section's notes, also in the full `npm run bench`). */
export const NFT_SECTION_NOTES = [
  '- Block execution = `Chain.propose` timings (execute + state root) of one 10,000-transaction block; transactions as admission leaves',
  '  them (rules checked, signatures verified beforehand), so signature checks are not in these numbers, as in "Block execution".',
  '  Commit (RocksDB batch with the event index) and the NFT index follow the block and are shown beside.',
  '',
];

/** Replace (or append) the "## NFTs (SRC-721)" section of bench/RESULTS.md. */
function writeSection(rows: Row[], load: string): void {
  const file = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
  const title = '## NFTs (SRC-721)';
  const section = [
    title,
    '',
    `- Date: ${new Date().toISOString()}; command: \`npm run bench:nft\` (bench/nft.ts); shared 2-core machine, 1-min load average ${load}.`,
    ...NFT_SECTION_NOTES,
    '| Measurement | Result | Notes |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.value} | ${r.note ?? ''} |`),
    '',
  ].join('\n');
  const md = readFileSync(file, 'utf8');
  const at = md.indexOf(title);
  if (at < 0) {
    writeFileSync(file, `${md.trimEnd()}\n\n${section}`);
    return;
  }
  const end = md.indexOf('\n## ', at + title.length);
  writeFileSync(file, md.slice(0, at) + section + (end < 0 ? '' : md.slice(end + 1)));
}

async function main(): Promise<void> {
  const load = loadavg()[0].toFixed(2);
  const rows = [...(await benchNftExecution(Number(process.env.BENCH_NFT_ROUNDS ?? 5))), ...(await benchNftOwnerQuery())];
  for (const r of rows) process.stdout.write(`${r.name}: ${r.value} (${r.note ?? ''})\n`);
  writeSection(rows, `${load} at start, ${loadavg()[0].toFixed(2)} at end`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
