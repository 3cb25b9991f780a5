/**
 * Explorer page times on a large chain: 100,000 blocks holding 1,000,000 native transfers (10 per block from
 * 10,000 senders to 50,000 recipients), made directly through the chain API (propose + commit, signatures
 * real and verified by block validation) and cached in .tmp/bench-explorer (a later run reuses it, an
 * interrupted build resumes). The first run on a chain adds an SRC-20 token with 20,000 holders and an
 * SRC-721 collection of 10,000 NFTs held by 5,000 addresses (bench/explorer-extras.ts, kept with the chain). Each run appends a few EVM blocks (a token and transfers: call
 * trees), fills the mempool, starts the chain index's background warm-up as a node does, then times every explorer page through the API handler in-process (routing, services, templates,
 * headers: the server's time without the socket), with ids drawn at random across the whole chain.
 *
 *   npm run build && node dist/bench/explorer.js   (BENCH_EXPLORER_BLOCKS=N for a smaller chain,
 *   BENCH_EXPLORER_BUILD_ONLY=1 to build or resume the chain without timing pages)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createApiHandler, restRoutes } from '../ts/api/index.js';
import { Chain } from '../ts/chain/chain.js';
import type { ChainParams } from '../ts/chain/params.js';
import { PRESET_ACTIVATION } from '../ts/chain/params.js';
import { PoaEngine } from '../ts/consensus/poa.js';
import type { HttpRequest, HttpResponse } from '../ts/http/index.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { BASE_PER_COIN } from '../ts/modules/kit/units.js';
import { TxAdmission } from '../ts/mempool/admission.js';
import { Mempool } from '../ts/mempool/mempool.js';
import { NODE_VERSION, getNonce } from '../ts/services/index.js';
import { EXPLORER_TRACE_WAIT_MS, callTree } from '../ts/explorer/read-model.js';
import { WARM_STEP_BLOCKS, stateIndex, warmChainIndex } from '../ts/indexes/index.js';
import { openRocksStore } from '../ts/storage/index.js';
import { toHex } from '../ts/util/hex.js';
import { EvmSender, callData, deployData } from './evm-fixtures.js';
import { type BenchContext, ensureNftExtras, ensureTokenExtras, nftHolderKey } from './explorer-extras.js';
import { type ChainShape, recipientAddress } from './explorer-shape.js';

const BLOCKS = Number(process.env.BENCH_EXPLORER_BLOCKS ?? 100_000);
const CACHE = fileURLToPath(new URL(`../../.tmp/bench-explorer-${BLOCKS}/`, import.meta.url));
/** Blocks signed per worker task (the main thread commits one chunk while the workers sign the next). */
const CHUNK_BLOCKS = 1000;
const WINDOW = 1000;
const WARM = 20;
const RUNS = Number(process.env.BENCH_EXPLORER_RUNS ?? 200);
const PENDING = 500;
/** EVM token transfers appended at the head (the first block's trace is timed alone; the others' first views are timed as pages). */
const EVM_BLOCKS = 3;
const EVM_PER_BLOCK = 120;

const validator = keyPairFromMnemonic(DEV_MNEMONIC, 9);
const deployer = keyPairFromMnemonic(DEV_MNEMONIC, 8);
const senderKey = (i: number): KeyPair => keyPairFromPrivate((BigInt(i) + 1n).toString(16).padStart(64, '0'));

const log = (s: string) => process.stderr.write(`${s}\n`);
const loadNow = () => loadavg()[0].toFixed(2);

function loadShape(): ChainShape {
  const file = join(CACHE, 'shape.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  mkdirSync(CACHE, { recursive: true });
  const shape: ChainShape = {
    blocks: BLOCKS,
    txPerBlock: 10,
    senders: 10_000,
    recipients: 50_000,
    chainId: 7120,
    // The last block about a minute before the build ends (charts of recent days have data).
    firstBlockTs: Math.floor(Date.now() / 1000) - BLOCKS - 60,
  };
  writeFileSync(file, JSON.stringify(shape));
  return shape;
}

function paramsOf(shape: ChainShape): ChainParams {
  const alloc = new Map<string, bigint>();
  for (let i = 0; i < shape.senders; i++) alloc.set(senderKey(i).address, 1000n * BASE_PER_COIN);
  alloc.set(deployer.address, 1000n * BASE_PER_COIN);
  return {
    network: 'dev',
    chainId: shape.chainId,
    genesisTimestamp: shape.firstBlockTs - 1,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: 'bench-validator' }],
    alloc,
    evmHardfork: 'prague',
    epochLength: 3600,
  };
}

/** Sign chunks of transactions on worker threads; tasks of one worker are answered in order. */
class Signers {
  private readonly workers: { w: Worker; waiting: ((txs: SignedTransaction[]) => void)[] }[];
  private next = 0;
  constructor(n: number) {
    this.workers = Array.from({ length: n }, () => {
      const entry = {
        w: new Worker(new URL('./explorer-sign-worker.js', import.meta.url)),
        waiting: [] as ((t: SignedTransaction[]) => void)[],
      };
      entry.w.on('message', (txs: SignedTransaction[]) => entry.waiting.shift()?.(txs));
      return entry;
    });
  }
  sign(shape: ChainShape, from: number, to: number): Promise<SignedTransaction[]> {
    const e = this.workers[this.next++ % this.workers.length];
    return new Promise((resolve) => {
      e.waiting.push(resolve);
      e.w.postMessage({ shape, from, to });
    });
  }
  close(): Promise<number[]> {
    return Promise.all(this.workers.map((e) => e.w.terminate()));
  }
}

async function build(chain: Chain, shape: ChainShape): Promise<void> {
  if (chain.height >= shape.blocks) return;
  const signers = new Signers(Math.max(1, cpus().length));
  const t0 = performance.now();
  const startHeight = chain.height;
  const chunkOf = (first: number) => {
    const last = Math.min(shape.blocks, first + CHUNK_BLOCKS - 1);
    return { first, last, txs: signers.sign(shape, (first - 1) * shape.txPerBlock, last * shape.txPerBlock) };
  };
  const queue = [chunkOf(chain.height + 1)];
  while (queue.length > 0) {
    const chunk = queue.shift() as ReturnType<typeof chunkOf>;
    // Two chunks in flight: the workers sign ahead while this thread executes and commits.
    for (let f = (queue.at(-1)?.last ?? chunk.last) + 1; queue.length < 2 && f <= shape.blocks; f = queue.at(-1)!.last + 1)
      queue.push(chunkOf(f));
    const txs = await chunk.txs;
    for (let h = chunk.first; h <= chunk.last; h++) {
      const at = (h - chunk.first) * shape.txPerBlock;
      const p = await chain.propose(txs.slice(at, at + shape.txPerBlock), validator, shape.firstBlockTs + h - 1);
      if (p.result.dropped.length) throw new Error(`block ${h}: dropped ${p.result.dropped.map((d) => d.reason).join(', ')}`);
      await chain.commit(p);
    }
    const done = chain.height - startHeight;
    const s = (performance.now() - t0) / 1000;
    log(
      `built ${chain.height}/${shape.blocks} blocks (${Math.round(done / s)} blocks/s, ${Math.round((done * shape.txPerBlock) / s)} tx/s, load ${loadNow()})`,
    );
  }
  await signers.close();
}

/** A few EVM blocks at the head (committed with the trace history attached, so their call trees are available). */
async function appendEvmBlocks(ctx: BenchContext): Promise<{ evmTxids: string[]; token: string; evmHeights: number[] }> {
  const { chain } = ctx;
  const evm = new EvmSender(deployer);
  evm.nonce = getNonce(ctx, deployer.address);
  const ts = () => Math.max(chain.head.timestamp, Math.floor(Date.now() / 1000));
  const deploy = evm.tx(undefined, deployData('Token', ['Bench Token', 'BNCH', 10n ** 27n]));
  let p = await chain.propose([deploy], validator, ts());
  await chain.commit(p);
  const token = toHex(p.result.receipts[0].contractAddress as Uint8Array);
  const evmTxids: string[] = [];
  const evmHeights: number[] = [];
  for (let b = 0; b < EVM_BLOCKS; b++) {
    const txs = Array.from({ length: EVM_PER_BLOCK }, (_, i) =>
      evm.tx(`0x${token}`, callData('Token', 'transfer', [recipientAddress(b * EVM_PER_BLOCK + i), 10n ** 18n])),
    );
    p = await chain.propose(txs, validator, ts());
    await chain.commit(p);
    evmTxids.push(...txs.map((t) => t.txid));
    evmHeights.push(chain.height);
  }
  return { evmTxids, token: `0x${token}`, evmHeights };
}

const request = (path: string): HttpRequest => {
  const [p, q = ''] = path.split('?');
  return { method: 'GET', path: p, query: new URLSearchParams(q), headers: {}, body: Buffer.alloc(0), ip: '127.0.0.1' };
};

interface PageCase {
  name: string;
  /** A path per request (random ids drawn outside the timing). */
  path: () => string;
  status?: number;
  note?: string;
}

const rand = (n: number) => Math.floor(Math.random() * n);
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)];
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function main(): Promise<void> {
  const shape = loadShape();
  const db = await openRocksStore(join(CACHE, 'db'));
  const chain = new Chain(paramsOf(shape), db, WINDOW);
  await chain.open();
  log(`chain at ${chain.height} (target ${shape.blocks}); load ${loadNow()}`);
  const tBuild = performance.now();
  const builtFrom = chain.height;
  await build(chain, shape);
  const buildSecs = (performance.now() - tBuild) / 1000;
  if (process.env.BENCH_EXPLORER_BUILD_ONLY) {
    log(`built to ${chain.height} in ${Math.round(buildSecs)} s`);
    await db.close();
    return;
  }
  const mempool = new Mempool();
  const admission = new TxAdmission(chain, mempool);
  const consensus = new PoaEngine(chain, mempool, validator, { blockTimeMs: 1000, maxBlockTxs: 10_000 });
  const ctx: BenchContext = {
    chain,
    mempool,
    admission,
    consensus,
    nodeName: 'bench',
    version: NODE_VERSION,
    build: 'bench',
    startedAt: Date.now(),
    cryptoBackend: 'native',
  };
  // As a node does when it opens its chain: rich list, holders and delegations indexed once from the state.
  await stateIndex(ctx);
  const src20 = await ensureTokenExtras(ctx, CACHE, deployer, validator, log);
  const nft = await ensureNftExtras(ctx, CACHE, deployer, validator, log);
  const { evmTxids, token, evmHeights } = await appendEvmBlocks(ctx);
  for (let i = 0; i < PENDING; i++) {
    const k = senderKey(i);
    await admission.submit(
      signTransaction(
        {
          from: k.address,
          to: recipientAddress(i),
          amount: 5_000n,
          fee: 10_000n,
          nonce: getNonce(ctx, k.address),
          chain_id: shape.chainId,
        },
        k,
      ),
    );
  }
  const head = chain.height;
  const handler = createApiHandler(ctx, restRoutes, {});
  const txidsIn = async (lo: number, hi: number, n: number): Promise<string[]> => {
    const out: string[] = [];
    while (out.length < n) {
      const b = await chain.blocks.getBlock(lo + rand(hi - lo));
      if (b && b.transactions.length > 0) out.push(pick(b.transactions).txid);
    }
    return out;
  };
  const oldTxids = await txidsIn(1, head - WINDOW, 100);
  const recentTxids = await txidsIn(head - WINDOW + 1, head - 4, 100);
  // Transactions of the blocks not traced yet (the first block's were traced above), in random order.
  const unviewed = evmTxids.slice(EVM_PER_BLOCK).sort(() => Math.random() - 0.5);
  const sender = () => senderKey(rand(shape.senders)).address;
  const cases: PageCase[] = [
    { name: 'home', path: () => '/explorer' },
    { name: 'blocks, page 1', path: () => '/explorer/blocks' },
    { name: 'blocks, random page (to 400)', path: () => `/explorer/blocks?page=${1 + rand(400)}` },
    { name: 'block in the window', path: () => `/explorer/block/${head - rand(WINDOW)}` },
    { name: 'block on disk', path: () => `/explorer/block/${1 + rand(head - WINDOW)}` },
    { name: 'transactions, page 1', path: () => '/explorer/transactions' },
    { name: 'transactions, random page (to 400)', path: () => `/explorer/transactions?page=${1 + rand(400)}` },
    { name: 'tx (native) in the window', path: () => `/explorer/tx/${pick(recentTxids)}` },
    { name: 'tx (native) on disk', path: () => `/explorer/tx/${pick(oldTxids)}` },
    {
      name: 'tx (EVM token transfer), first view',
      path: () => `/explorer/tx/${unviewed.pop() ?? pick(evmTxids)}`,
      note: `every request a transaction not viewed before; the first view of a block waits at most ${EXPLORER_TRACE_WAIT_MS} ms for its background trace, then renders and reloads`,
    },
    {
      name: 'tx (EVM token transfer), viewed again',
      path: () => `/explorer/tx/${pick(evmTxids.slice(0, 100))}`,
      note: 'call tree from the cache',
    },
    { name: 'validators', path: () => '/explorer/validators' },
    { name: 'validator', path: () => `/explorer/validators/${validator.address}` },
    { name: 'validator (alias)', path: () => `/explorer/validator/${validator.address}` },
    { name: 'tokens', path: () => '/explorer/tokens' },
    {
      name: 'token (SRC-20), page 1',
      path: () => `/explorer/tokens/${src20.token}`,
      note: `${src20.holders.toLocaleString()} holders, ${(src20.holders + 1).toLocaleString()} transfers`,
    },
    { name: 'token (alias)', path: () => `/explorer/token/${src20.token}` },
    {
      name: 'token holders, random page (to 400)',
      path: () => `/explorer/tokens/${src20.token}?tab=holders&page=${1 + rand(400)}`,
    },
    {
      name: 'token transfers, random page (to 400)',
      path: () => `/explorer/tokens/${src20.token}?tab=transfers&page=${1 + rand(400)}`,
    },
    { name: 'tx (SRC-20 transfer)', path: () => `/explorer/tx/${pick(src20.transferTxids)}` },
    {
      name: 'address (SRC-20 holder)',
      path: () => `/explorer/address/${recipientAddress(rand(src20.holders))}`,
      note: 'holdings from the state index',
    },
    {
      name: 'address (token deployer), SRC-20 transfers tab',
      path: () => `/explorer/address/${deployer.address}?tab=token-transfers&page=${1 + rand(400)}`,
    },
    { name: 'NFT collections', path: () => '/explorer/nfts' },
    {
      name: 'NFT collection, page 1',
      path: () => `/explorer/nfts/${nft.collection}`,
      note: `${nft.tokens.toLocaleString()} tokens, ${nft.holders.toLocaleString()} holders`,
    },
    { name: 'NFT collection (alias)', path: () => `/explorer/nft/${nft.collection}` },
    {
      name: 'NFT collection tokens, random page (to 400)',
      path: () => `/explorer/nfts/${nft.collection}?tab=tokens&page=${1 + rand(400)}`,
    },
    {
      name: 'NFT collection holders, random page (to 200)',
      path: () => `/explorer/nfts/${nft.collection}?tab=holders&page=${1 + rand(200)}`,
    },
    {
      name: 'NFT collection events, random page (to 400)',
      path: () => `/explorer/nfts/${nft.collection}?tab=events&page=${1 + rand(400)}`,
    },
    { name: 'NFT (token page)', path: () => `/explorer/nfts/${nft.collection}/${1 + rand(nft.tokens)}` },
    { name: 'NFT (alias)', path: () => `/explorer/nft/${nft.collection}/${1 + rand(nft.tokens)}` },
    { name: 'tx (NFT mint)', path: () => `/explorer/tx/${pick(nft.mintTxids)}` },
    {
      name: 'address (NFT holder), NFTs tab',
      path: () => `/explorer/address/${nftHolderKey(rand(nft.holders)).address}?tab=nfts`,
    },
    { name: 'address (sender, 100 txs), page 1', path: () => `/explorer/address/${sender()}` },
    { name: 'address (sender), page 4', path: () => `/explorer/address/${sender()}?page=4` },
    { name: 'address (recipient, 20 txs)', path: () => `/explorer/address/${recipientAddress(rand(shape.recipients))}` },
    { name: 'address (ERC-20 contract)', path: () => `/explorer/address/${token}` },
    { name: 'richlist', path: () => '/explorer/richlist' },
    { name: 'richlist, page 2', path: () => '/explorer/richlist?page=2' },
    { name: 'mempool', path: () => '/explorer/mempool', note: `${PENDING} pending transactions` },
    { name: 'search (txid -> redirect)', path: () => `/explorer/search?q=${pick(oldTxids)}`, status: 303 },
    { name: 'unknown page (404)', path: () => '/explorer/nope', status: 404 },
  ];
  const time = async (path: string, status: number): Promise<number> => {
    const t0 = performance.now();
    const res: HttpResponse = await handler(request(path));
    const dt = performance.now() - t0;
    if (res.status !== status) throw new Error(`${path}: HTTP ${res.status} ${String(res.body).slice(0, 300)}`);
    return dt;
  };
  // The explorer traces a block's call trees in one background pass on the first view of one of its
  // transactions; time that pass alone for the first EVM block (every later view of its transactions hits the cache).
  const tTrace = performance.now();
  const traced = await callTree(ctx, evmHeights[0], evmTxids[0], Number.POSITIVE_INFINITY);
  if (!('tree' in traced)) throw new Error(`block trace: ${JSON.stringify(traced)}`);
  const blockTraceMs = performance.now() - tTrace;
  const loadBefore = loadNow();
  // As a node does from its start: the chain index folds the history in the background while pages are served.
  const tWarm = performance.now();
  const warm = warmChainIndex(ctx);
  let warmMs = 0;
  void warm.done.then(() => {
    warmMs = performance.now() - tWarm;
  });
  const cold: string[] = [];
  for (const c of cases) cold.push(`${c.name} ${ms(await time(c.path(), c.status ?? 200))}`);
  const coldDuringWarmUp = warmMs === 0;
  await warm.done;
  const rows: string[] = [];
  for (const c of cases) {
    for (let i = 0; i < WARM; i++) await time(c.path(), c.status ?? 200);
    const xs: number[] = [];
    for (let i = 0; i < RUNS; i++) xs.push(await time(c.path(), c.status ?? 200));
    xs.sort((a, b) => a - b);
    const p95 = pct(xs, 95);
    rows.push(
      `| ${c.name} | ${ms(pct(xs, 50))} | **${ms(p95)}** | ${ms(xs[xs.length - 1])} | ${p95 <= 50 ? 'yes' : 'NO'} | ${c.note ?? ''} |`,
    );
    log(rows.at(-1) as string);
  }
  const cpu = cpus();
  const md = [
    '## Explorer pages on a large chain',
    '',
    `- Date: ${new Date().toISOString()}; machine: ${cpu.length} x ${cpu[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node.js ${process.version}; shared with other jobs (1-min load average ${loadBefore} before the timed runs, ${loadNow()} after).`,
    `- Command: \`npm run bench:explorer\` (\`node dist/bench/explorer.js\`, bench/explorer.ts). Chain: ${head.toLocaleString()} blocks (${shape.blocks.toLocaleString()} with ${shape.txPerBlock} native transfers each = ${(shape.blocks * shape.txPerBlock).toLocaleString()} transactions from ${shape.senders.toLocaleString()} senders to ${shape.recipients.toLocaleString()} recipients; an SRC-20 token deployed as a native operation and sent to ${src20.holders.toLocaleString()} holders in blocks of 1,000 transfers; an SRC-721 collection of ${nft.tokens.toLocaleString()} NFTs minted to ${nft.holders.toLocaleString()} holders in blocks of 1,000 mints, then 1,000 of them moved; every run appends ${1 + EVM_BLOCKS} EVM blocks: an ERC-20 and ${EVM_BLOCKS * EVM_PER_BLOCK} transfers), RocksDB, in-memory window ${WINDOW} blocks; ${PENDING} transactions in the mempool. ${builtFrom < shape.blocks ? `Built in this run from height ${builtFrom} in ${Math.round(buildSecs)} s.` : 'Reused from .tmp/ (built by an earlier run).'}`,
    `- Server time per page: the API handler called in-process (routing, services, templates, headers; no socket), ${RUNS} requests per page after ${WARM} untimed ones, ids drawn at random across the chain for every request. Goal: p95 <= 50 ms.`,
    `- Call trees: tracing a block of ${EVM_PER_BLOCK} ERC-20 transfers with the callTracer in one pass (the background job the first view of one of its transactions starts) took ${ms(blockTraceMs)}; tracing one transaction alone re-executes the transactions before it in its block, hence one pass per block and a cache of ${'4,096'} trees.`,
    `- First request of each page on the fresh process, ${coldDuringWarmUp ? 'all served while' : 'served as'} the chain index warmed in the background (${WARM_STEP_BLOCKS} blocks per event loop turn; the whole ${head.toLocaleString()}-block history folded in ${(warmMs / 1000).toFixed(1)} s; the rich list scans the state once per head block): ${cold.join('; ')}.`,
    '',
    '| Page | p50 | p95 | max | p95 <= 50 ms | Notes |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(`${md}\n`);
  await db.close();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
