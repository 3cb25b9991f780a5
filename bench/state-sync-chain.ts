/**
 * The state sync bench's network (issue 25, Targets): a 4-validator testnet whose chain is `blocks` long and
 * whose state holds `accounts` accounts, made once in this process and cached under .tmp/ (a rerun starts at
 * once). The blocks go through the node's own Chain, sealed by the scheduled proposer with the validators' own
 * keys and carrying a commit certificate of three of the four, so real validator processes open and extend it
 * and a full node block-syncing from genesis verifies every one. The accounts come from native transfers by
 * the ten dev accounts to fresh addresses, `PER_BLOCK` a block, spread evenly over the chain; the other blocks
 * are empty. At the head the node's own snapshot code (ts/snapshot/take.ts) takes the snapshot every validator
 * starts with and serves (`--snapshot-interval blocks`): taking it live cost each validator minutes of CPU on
 * this shared machine before every run, and changes nothing in what the joining node is offered.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chain, proposerAt, readGenesisFile, TRIE_CHECKPOINT_FILE } from '../ts/chain/index.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, type SignedTransaction, signTransaction } from '../ts/ledger/index.js';
import { type TestnetNode, generateTestnet } from '../ts/node/testnet.js';
import { openStateIndex, stopStateIndex } from '../ts/indexes/index.js';
import { SNAPSHOTS_DIR, startSnapshot } from '../ts/snapshot/index.js';
import { openRocksStore } from '../ts/storage/index.js';
import { REPO } from '../test/helpers/devnet.js';
import { validatorKeyOf } from '../test/helpers/prebuilt-chain.js';
import { certificate } from '../test/helpers/bft-blocks.js';

/** Transfers (each to a fresh address) per block that carries any. */
export const PER_BLOCK = 1000;
const CHAIN_ID = 7150;
/** The port base the network is generated with; each run moves it to a free base (withBasePort). */
const GEN_BASE = 26_000;
/** Recipients whose balances the bench compares (validators against the joining node). */
const SAMPLE = 16;

export interface StateSyncNet {
  /** The cache directory: net/ (the generated network), pristine/ (node0's built database and trie checkpoint). */
  dir: string;
  accounts: number;
  blocks: number;
  /** Height of the prebuilt chain (`blocks`; less in a cache made before the snapshot was part of it). */
  prebuilt: number;
  /** Recipients of the transfers, to compare balances. */
  sample: string[];
  /** Time the preparation took (0 on a cache hit: the recorded time of the run that made it). */
  buildMs: number;
  /** Bytes of the built database directory. */
  dbBytes: number;
  /** Time the snapshot of the head took in the preparation (undefined in a cache made before it had one). */
  snapshotMs?: number;
  /** The state index (rich list, holders) is built at the head, as on validators that have run for a while. */
  indexed?: boolean;
}

const cacheDir = (accounts: number, blocks: number) => join(REPO, '.tmp', 'bench-state-sync', `a${accounts}-b${blocks}`);

export function duBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

/**
 * The cached network of this size, made first when there is none — in a child process, so the gigabytes of
 * the build's trie are returned to the machine before the nodes start.
 */
export async function prepareStateSyncNet(accounts: number, blocks: number, log: (s: string) => void): Promise<StateSyncNet> {
  const ready = join(cacheDir(accounts, blocks), 'ready.json');
  if (!existsSync(ready)) {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(accounts), String(blocks)], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the state sync bench's chain build failed (exit ${code})`);
  }
  return buildStateSyncNet(accounts, blocks, log);
}

/** The cached network of this size, built in this process first when there is none. */
async function buildStateSyncNet(accounts: number, blocks: number, log: (s: string) => void): Promise<StateSyncNet> {
  const dir = cacheDir(accounts, blocks);
  const ready = join(dir, 'ready.json');
  if (existsSync(ready)) {
    log(`state sync bench: the prepared chain is cached in ${dir}`);
    const cached = JSON.parse(readFileSync(ready, 'utf8')) as StateSyncNet;
    // A cache made before the snapshot was part of it: the last empty blocks and the snapshot added.
    if (cached.snapshotMs === undefined) {
      const t0 = performance.now();
      cached.snapshotMs = await finishChain(cached, log);
      cached.prebuilt = blocks;
      cached.buildMs += Math.round(performance.now() - t0);
      cached.dbBytes = duBytes(join(dir, 'pristine', 'db'));
      writeFileSync(ready, `${JSON.stringify(cached, null, 2)}\n`);
    }
    if (!cached.indexed) {
      await indexChain(cached, log);
      cached.indexed = true;
      writeFileSync(ready, `${JSON.stringify(cached, null, 2)}\n`);
    }
    return cached;
  }
  if (blocks < Math.ceil(accounts / PER_BLOCK) + 10)
    throw new Error(`${blocks} blocks cannot carry ${accounts} new accounts (${PER_BLOCK} a block)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: join(dir, 'net'),
    basePort: GEN_BASE,
    chainId: CHAIN_ID,
    dposBftHeight: 1,
    blockTimeMs: 1000,
  });
  const t0 = performance.now();
  const net: StateSyncNet = { dir, accounts, blocks, prebuilt: blocks, sample: [], buildMs: 0, dbBytes: 0 };
  net.sample = await buildChain(net, log);
  net.snapshotMs = await finishChain(net, log);
  await indexChain(net, log);
  net.indexed = true;
  net.buildMs = Math.round(performance.now() - t0);
  net.dbBytes = duBytes(join(dir, 'pristine', 'db'));
  writeFileSync(ready, `${JSON.stringify(net, null, 2)}\n`);
  return net;
}

interface Builder {
  chain: Chain;
  close: () => Promise<void>;
  /** Seal the next block with `txs` by its scheduled proposer, certify it (3 of 4 precommits) and commit it. */
  next: (txs: SignedTransaction[]) => Promise<void>;
}

/** The pristine chain (node0's database in `<dir>/pristine`) opened for building on. */
async function openBuilder(net: StateSyncNet): Promise<Builder> {
  const nodes = JSON.parse(readFileSync(join(net.dir, 'net', 'nodes.json'), 'utf8')) as TestnetNode[];
  const keys = nodes.filter((n) => n.role === 'validator').map(validatorKeyOf);
  const keyOf = (address: string) => keys.find((k) => k.address === address) as KeyPair;
  const params = readGenesisFile(join(net.dir, 'net', 'genesis.json'));
  const out = join(net.dir, 'pristine');
  mkdirSync(out, { recursive: true });
  const db = await openRocksStore(join(out, 'db'));
  // The node's own checkpoint file, written once at the end (not every 1,000 blocks: the build would copy the trie 100 times).
  const chain = new Chain(params, db, 1024, { trieCheckpoint: { path: join(out, TRIE_CHECKPOINT_FILE), everyBlocks: 1e12 } });
  await chain.open();
  const next = async (txs: SignedTransaction[]) => {
    const h = chain.height + 1;
    const proposer = keyOf(proposerAt(params, chain.state, h, 0)?.address as string);
    const head = chain.head;
    const lastCommit = head.consensus === 'DPoS+BFT' ? head.justification : new Uint8Array(0);
    const exec = await chain.execute(txs, proposer.address, chain.now(), undefined, { last_commit: lastCommit, evidence: [] });
    const sealed = chain.seal(exec, proposer, 0, { proposal: true });
    const b = sealed.block;
    if (b.tx_count !== txs.length) throw new Error(`block ${h} dropped a transaction`);
    let block = b;
    if (b.consensus === 'DPoS+BFT') {
      // Three of the four precommit, a different one left out each height (as a slow validator would be).
      const justification = certificate(
        params,
        b,
        keys.filter((_, i) => i !== h % keys.length),
      );
      block = { ...b, justification };
    }
    // The sealed execution committed as it is (a validator commits its decided proposal the same way): no second execution.
    await chain.commit({ ...sealed, block });
  };
  return { chain, next, close: () => db.close() };
}

/** Make the chain up to `net.blocks` in the pristine database; returns a sample of the new accounts. */
async function buildChain(net: StateSyncNet, log: (s: string) => void): Promise<string[]> {
  const { accounts, blocks: height } = net;
  const { chain, next, close } = await openBuilder(net);
  const funders = Array.from({ length: 10 }, (_, i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
  const nonces = funders.map(() => 0n);
  const transferBlocks = Math.ceil(accounts / PER_BLOCK);
  // Transfer blocks every `stride` heights from height 2 on, so the state grows along the whole chain.
  const stride = Math.max(1, Math.floor((height - 2) / transferBlocks));
  const sample: string[] = [];
  const sampleEvery = Math.max(1, Math.floor(accounts / SAMPLE));
  let made = 0;
  const t0 = performance.now();
  try {
    for (let h = chain.height + 1; h <= height; h++) {
      const txs: SignedTransaction[] = [];
      if (h >= 2 && (h - 2) % stride === 0 && made < accounts) {
        const n = Math.min(PER_BLOCK, accounts - made);
        for (let i = 0; i < n; i++, made++) {
          const f = made % funders.length;
          const to = `0x${randomBytes(20).toString('hex')}`;
          if (made % sampleEvery === 0 && sample.length < SAMPLE) sample.push(to);
          const tx = { from: funders[f].address, to, amount: 1_000n + BigInt(made % 997), fee: 10_000n, nonce: nonces[f]++ };
          txs.push(signTransaction({ ...tx, chain_id: chain.params.chainId }, funders[f]));
        }
      }
      await next(txs);
      if (h % 5000 === 0) {
        const s = (performance.now() - t0) / 1000;
        log(`  built ${h}/${height} blocks, ${made} accounts, ${s.toFixed(0)} s (${Math.round(h / s)} blocks/s)`);
      }
    }
  } finally {
    await close();
  }
  return sample;
}

/**
 * Empty blocks up to `net.blocks` (none on a fresh build), then the node's own snapshot of the head into
 * `<dir>/pristine/snapshots` (the validators start with it and serve it: the same code takes it in a node,
 * ts/snapshot/take.ts) and the trie checkpoint of the head. Returns the time the snapshot took.
 */
async function finishChain(net: StateSyncNet, log: (s: string) => void): Promise<number> {
  const { chain, next, close } = await openBuilder(net);
  try {
    while (chain.height < net.blocks) await next([]);
    const head = chain.head;
    const t0 = performance.now();
    const root = join(net.dir, 'pristine', SNAPSHOTS_DIR);
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    const m = await startSnapshot(chain.blocks.db, { height: head.index, hash: head.hash, stateRoot: head.state_root }, root);
    const ms = Math.round(performance.now() - t0);
    log(`  snapshot of ${head.index}: ${m.entries} entries, ${m.chunks.length} chunks, ${ms} ms`);
    if (!(await chain.checkpointNow())) throw new Error('no trie checkpoint written');
    return ms;
  } finally {
    await close();
  }
}

/**
 * The state index of the head built in the pristine database: validators that have run for months have theirs,
 * and rebuilding it over the whole state in each of the four at every start would slow them (and their
 * serving) during the joins.
 */
async function indexChain(net: StateSyncNet, log: (s: string) => void): Promise<void> {
  const { chain, close } = await openBuilder(net);
  try {
    const t0 = performance.now();
    const idx = await openStateIndex(chain);
    await idx.ready(3_600_000);
    await stopStateIndex(chain);
    log(`  state index of ${chain.height} built in ${Math.round(performance.now() - t0)} ms`);
  } finally {
    await close();
  }
}

/**
 * The cached network reset for a run: every node's data dir back to its keys, the validators' databases and
 * trie checkpoints copied from the pristine build, the joining node (node4) fresh; ports moved to `base`.
 */
export function resetNet(net: StateSyncNet, base: number): TestnetNode[] {
  const nodes = (JSON.parse(readFileSync(join(net.dir, 'net', 'nodes.json'), 'utf8')) as TestnetNode[]).map((n) =>
    withBasePort(n, base),
  );
  for (const n of nodes) {
    for (const e of readdirSync(n.data_dir))
      if (!e.endsWith('.key')) rmSync(join(n.data_dir, e), { recursive: true, force: true });
    if (n.role !== 'validator') continue;
    cpSync(join(net.dir, 'pristine', 'db'), join(n.data_dir, 'db'), { recursive: true });
    cpSync(join(net.dir, 'pristine', TRIE_CHECKPOINT_FILE), join(n.data_dir, TRIE_CHECKPOINT_FILE));
    cpSync(join(net.dir, 'pristine', SNAPSHOTS_DIR), join(n.data_dir, SNAPSHOTS_DIR), { recursive: true });
  }
  return nodes;
}

/** A node of the generated network with its API, P2P and gRPC ports moved from GEN_BASE to `base`. */
function withBasePort(n: TestnetNode, base: number): TestnetNode {
  const move = (p: number) => (p >= GEN_BASE && p < GEN_BASE + 300 ? p - GEN_BASE + base : p);
  return {
    ...n,
    api_url: n.api_url.replace(/:(\d+)$/, (_, p) => `:${move(Number(p))}`),
    p2p_port: move(n.p2p_port),
    start: n.start.replace(/(tcp\/|-port )(\d+)/g, (_, pre, p) => `${pre}${move(Number(p))}`),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [accounts, blocks] = process.argv.slice(2).map(Number);
  await buildStateSyncNet(accounts, blocks, (s) => process.stdout.write(`${s}\n`));
}
