/**
 * The network targets on this machine, with real node processes on 127.0.0.1 (the testnet generator's
 * network, libp2p, BFT from height 1, 1 s blocks): block interval at rest and under a 2k tx/s load,
 * proposal -> finality, gossip latency of a transaction to every peer, recovery after a validator
 * restart, and the sync speed of a late full node over empty blocks and over blocks of transfers.
 * `npm run build && node dist/bench/network.js [live|sync] [--write]` prints the rows (and with --write
 * replaces the "Network" section of bench/RESULTS.md; with `live` or `sync` only those rows are run and
 * replaced); `npm run bench` runs it too. BENCH_SYNC_BLOCKS and BENCH_SYNC_TX_BLOCKS size the sync rows.
 * The sync rows carry where the full node's catch-up pass spent its time, from its own log line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KeyPair, randomKeyPair } from '../ts/ledger/keys.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { type TestnetNode, generateTestnet } from '../ts/node/testnet.js';
import { type Running, freeBasePort, height, startNode, stopNode } from '../test/helpers/devnet.js';
import { devKey } from '../test/helpers/evm.js';
import { prebuildChain } from '../test/helpers/prebuilt-chain.js';

const CHAIN_ID = 7120;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');

/**
 * fetch, retried a few times: a keep-alive socket the node closed while idle fails the next request on
 * it ("other side closed"), and a node under load may answer late.
 */
async function get(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      if (attempt >= 4) throw err;
      await sleep(200 * attempt);
    }
  }
}

async function json(url: string, init?: RequestInit): Promise<any> {
  return (await get(url, init)).json();
}

function stats(xs: number[]): { mean: number; sd: number; p50: number; p95: number; n: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length));
  return { mean, sd, p50: s[Math.floor((s.length - 1) / 2)] ?? 0, p95: s[Math.floor((s.length - 1) * 0.95)] ?? 0, n: xs.length };
}

const secs = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

interface Network {
  nodes: TestnetNode[];
  running: Map<number, Running>;
  stop(): Promise<void>;
}

async function network(o: {
  blockTimeMs: number;
  prebuilt: number;
  fund?: KeyPair[];
  load?: { senders: KeyPair[]; blocks: number };
  start: number[];
}): Promise<Network> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-net-'));
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: dir,
    basePort: await freeBasePort(5),
    chainId: CHAIN_ID,
    dposBftHeight: 1,
    blockTimeMs: o.blockTimeMs,
  });
  if (o.prebuilt > 0) await prebuildChain(nodes, o.prebuilt, { fund: o.fund, load: o.load });
  const running = new Map<number, Running>();
  for (const i of o.start) running.set(i, startNode(nodes[i], [], { NATIVE_LOG_LEVEL: 'warn' }));
  return {
    nodes,
    running,
    stop: async () => {
      await Promise.all([...running.values()].map((r) => stopNode(r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Wall-clock time each new height is first seen on a node (polled every 20 ms) for `ms`, or until `until` resolves. */
async function watchHeights(url: string, ms: number, until?: Promise<unknown>): Promise<{ at: number[]; heights: number[] }> {
  const at: number[] = [];
  const heights: number[] = [];
  let last = await height(url);
  const end = Date.now() + ms;
  let done = false;
  void until?.then(() => {
    done = true;
  });
  while (until ? !done : Date.now() < end) {
    const h = await height(url);
    if (h > last) {
      for (let x = last + 1; x <= h; x++) {
        at.push(performance.now());
        heights.push(x);
      }
      last = h;
    }
    await sleep(20);
  }
  return { at, heights };
}

const intervals = (at: number[]) => at.slice(1).map((t, i) => t - at[i]);

/** The proposal -> finality histogram of every listed node, summed (cumulative bucket counts). */
async function finalityHistogram(urls: string[]): Promise<Map<number, number>> {
  const sum = new Map<number, number>();
  for (const u of urls) {
    const text = await (await get(`${u}/metrics`)).text();
    for (const m of text.matchAll(/native_bft_proposal_to_finality_seconds_bucket\{le="([^"]+)"\} (\d+)/g)) {
      const le = m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]);
      sum.set(le, (sum.get(le) ?? 0) + Number(m[2]));
    }
  }
  return sum;
}

/** A quantile of the difference of two cumulative histograms (linear within the bucket). */
function quantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  const want = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const le of les) {
    const c = (after.get(le) ?? 0) - (before.get(le) ?? 0);
    if (c >= want) {
      if (!Number.isFinite(le)) return prevLe;
      return prevLe + ((le - prevLe) * (want - prevCount)) / Math.max(1, c - prevCount);
    }
    prevLe = le;
    prevCount = c;
  }
  return prevLe;
}

async function submit(url: string, tx: SignedTransaction): Promise<void> {
  await get(`${url}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ transaction: tx }, (_, v) => (typeof v === 'bigint' ? Number(v) : v)),
  });
}

/** JSON-RPC batch of native_sendTransaction (amounts here are small: plain JSON numbers). */
async function submitBatch(url: string, txs: SignedTransaction[]): Promise<void> {
  const body = txs.map((tx, id) => ({ jsonrpc: '2.0', id, method: 'native_sendTransaction', params: [tx] }));
  await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body, (_, v) => (typeof v === 'bigint' ? Number(v) : v)),
  }).catch(() => undefined);
}

async function liveNetworkRows(log: (s: string) => void): Promise<string[]> {
  const senders = Array.from({ length: 2000 }, () => randomKeyPair());
  const net = await network({ blockTimeMs: 1000, prebuilt: 4, fund: senders, start: [0, 1, 2, 3] });
  const urls = net.nodes.slice(0, 4).map((n) => n.api_url);
  const rows: string[] = [];
  try {
    while ((await Promise.all(urls.map(height))).some((h) => h < 8)) await sleep(200);
    // At rest.
    log('  at rest ...');
    const h0 = await finalityHistogram(urls);
    const rest = await watchHeights(urls[0], 45_000);
    const h1 = await finalityHistogram(urls);
    const gaps = stats(intervals(rest.at));
    rows.push(
      `| block interval at rest (4 validators, BFT, 1 s) | ${secs(gaps.mean)} mean, σ ${secs(gaps.sd)}, p50 ${secs(gaps.p50)}, p95 ${secs(gaps.p95)} | ${gaps.n} intervals on node0's API; target 1.00 s ± 5%: ${Math.abs(gaps.mean - 1000) <= 50 ? 'met' : 'MISSED'}; load ${load()} |`,
    );
    const p50 = quantile(h0, h1, 0.5);
    rows.push(
      `| proposal -> finality at rest | p50 ${secs(p50 * 1000)}, p95 ${secs(quantile(h0, h1, 0.95) * 1000)} | from a proposal reaching a validator (or being made) to its commit there, all 4 validators' histograms; goal p50 ≤ 1.1 s: ${p50 <= 1.1 ? 'met' : 'MISSED'} |`,
    );
    log('  gossip latency ...');
    // Gossip latency: a transfer submitted to node0 until every other validator holds it.
    const alice = devKey(0);
    const lat: number[] = [];
    for (let i = 0; i < 40; i++) {
      const tx = signTransaction(
        { from: alice.address, to: devKey(1).address, amount: 1n, fee: 10_000n, nonce: BigInt(i), chain_id: CHAIN_ID },
        alice,
      );
      const t0 = performance.now();
      await submit(urls[0], tx);
      const seen = new Set<number>();
      while (seen.size < 3 && performance.now() - t0 < 10_000) {
        await Promise.all(
          [1, 2, 3].map(async (k) => {
            if (seen.has(k)) return;
            const r = await get(`${urls[k]}/transactions/${tx.txid}`);
            if (r.status === 200) seen.add(k);
            else await r.arrayBuffer();
          }),
        );
        if (seen.size < 3) await sleep(2);
      }
      lat.push(performance.now() - t0);
      await sleep(100);
    }
    const g = stats(lat);
    rows.push(
      `| gossip latency of a transaction to all 3 peers | p50 ${g.p50.toFixed(0)} ms, p95 ${g.p95.toFixed(0)} ms | ${g.n} transfers submitted to node0 (REST), until GET /transactions/{txid} answers on every other validator (polled every ~2 ms); includes the 50 ms batching window and admission |`,
    );
    log('  under load ...');
    // Under a 2k tx/s load for 20 s: 2,000 funded senders, one transfer each per second.
    const seconds = 20;
    const presigned = Array.from({ length: seconds }, (_, s) =>
      senders.map((k) =>
        signTransaction(
          { from: k.address, to: alice.address, amount: 1n, fee: 10_000n, nonce: BigInt(s), chain_id: CHAIN_ID },
          k,
        ),
      ),
    );
    const l0 = await finalityHistogram(urls);
    const tStart = performance.now();
    // Each second's transfers go out on schedule, at most 8 batches (800 transfers) awaiting an answer:
    // the network is loaded up to what it takes, and the block interval is measured meanwhile.
    const sending = (async () => {
      const inFlight = new Set<Promise<void>>();
      for (let s = 0; s < seconds; s++) {
        const due = tStart + s * 1000;
        while (performance.now() < due) await sleep(5);
        const txs = presigned[s];
        for (let b = 0; b < txs.length; b += 100) {
          while (inFlight.size >= 8) await Promise.race(inFlight);
          const p = submitBatch(urls[(b / 100) % 4], txs.slice(b, b + 100)).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      }
      await Promise.all(inFlight);
    })();
    const watch = watchHeights(urls[0], 0, sending);
    await sending;
    const sentFor = (performance.now() - tStart) / 1000;
    const seen = await watch;
    // Let the pools drain before the next measurement.
    while ((await json(`${urls[0]}/mempool`)).size > 0) await sleep(500);
    const l1 = await finalityHistogram(urls);
    const loaded = stats(intervals(seen.at).slice(2, -3));
    let included = 0;
    for (const h of seen.heights) included += (await json(`${urls[0]}/chain/blocks/${h}`)).tx_count as number;
    const span = (seen.at[seen.at.length - 1] - seen.at[0]) / 1000;
    const carried = Math.round(included / Math.max(1, span));
    // The target holds only if the interval stays within 5% while the network carries the 2k tx/s.
    const intervalMet = Math.abs(loaded.mean - 1000) <= 50;
    const verdict =
      intervalMet && carried >= 1900
        ? 'met'
        : intervalMet
          ? `MISSED: the interval held, the load was carried at ${carried} tx/s, not 2,000`
          : 'MISSED';
    rows.push(
      `| block interval under a 2k tx/s load | ${secs(loaded.mean)} mean, σ ${secs(loaded.sd)}, p95 ${secs(loaded.p95)} | ${senders.length * seconds} transfers offered at 2,000/s for ${seconds} s from ${senders.length} senders (JSON-RPC batches of 100 round-robin over the validators, at most 8 unanswered), all answered after ${sentFor.toFixed(1)} s; ${included} included in ${seen.heights.length} blocks (${carried} tx/s); target 1.00 s ± 5% at 2k tx/s: ${verdict}; load ${load()} |`,
    );
    rows.push(
      `| proposal -> finality under the load | p50 ${secs(quantile(l0, l1, 0.5) * 1000)}, p95 ${secs(quantile(l0, l1, 0.95) * 1000)} | blocks of up to ~2,000 transfers, each executed once per validator |`,
    );
    log('  recovery ...');
    // Recovery: a validator killed, the others go on for 10 s, then it restarts.
    const victim = net.running.get(2) as Running;
    await stopNode(victim);
    await sleep(10_000);
    const t0 = performance.now();
    net.running.set(2, startNode(net.nodes[2], [], { NATIVE_LOG_LEVEL: 'warn' }));
    while ((await height(urls[2])) < 0) await sleep(20);
    const tApi = performance.now();
    while ((await height(urls[2])) < (await height(urls[0]))) await sleep(20);
    const tSynced = performance.now();
    const address = net.nodes[2].validator_address as string;
    let tSigned = 0;
    for (let checked = await height(urls[0]); tSigned === 0 && performance.now() - t0 < 120_000; ) {
      const head = await height(urls[0]);
      for (; checked < head; checked++) {
        const s = await json(`${urls[0]}/chain/blocks/${checked}/signers`);
        if ((s.signers as string[]).includes(address)) {
          tSigned = performance.now();
          break;
        }
      }
      await sleep(50);
    }
    rows.push(
      `| recovery after a validator restart (SIGKILL, 10 s down) | ${secs(tSynced - t0)} to the network's head, ${secs(tSigned - t0)} to its precommit in a certificate | process start -> API up ${secs(tApi - t0)} (module loading, RocksDB open, state rebuilt and checked) |`,
    );
  } finally {
    await net.stop();
  }
  return rows;
}

/** Per-phase totals of a catch-up pass, as the node logs them (ts/sync/sync-phases.ts). */
type Phases = Record<string, number>;

/** "where the time went" for a row: the pass's phases per block (ms), from the node's own log line. */
function phaseNote(p: Phases | undefined, blocks: number): string {
  if (!p?.blocks) return 'phases: not logged';
  const per = (k: string) => `${(p[k] / Math.max(1, blocks)).toFixed(3)}`;
  return (
    `per block (ms): waiting for the network ${per('wait_ms')}, decode ${per('decode_ms')}, signatures verified ahead ${per('verify_ms')}` +
    ` (${p.signatures.toLocaleString()} in batches), import ${per('import_ms')} (rules and execution ${per('validate_ms')}, write ${per('write_ms')}, listeners ${per('listeners_ms')});` +
    ` ${p.ranges} range requests, ${(p.bytes / 1e6).toFixed(1)} MB`
  );
}

/** A late full node against one serving validator: blocks/s from its first imported block to the head. */
async function syncRows(log: (s: string) => void): Promise<string[]> {
  const rows: string[] = [];
  // 10,000 blocks: a catch-up of 2,000 is still mostly the JIT's warm-up (the same build measures ~1,900 blocks/s
  // over 2,000 and ~2,600 over 10,000); a node joining a months-old network imports millions.
  const empty = Number(process.env.BENCH_SYNC_BLOCKS ?? 10_000);
  {
    log(`  prebuilding ${empty} empty blocks ...`);
    const net = await network({ blockTimeMs: 1000, prebuilt: empty, start: [0] });
    log('  syncing ...');
    try {
      while ((await height(net.nodes[0].api_url)) < empty) await sleep(100);
      const r = await timeSync(net, empty);
      rows.push(
        `| late full node sync, empty BFT blocks | ${Math.round(r.rate).toLocaleString()} blocks/s | ${r.blocks} blocks (commit certificates, last_commit and state roots verified, each block executed), the node's own catch-up pass; process start to head ${secs(r.totalMs)}; goal ≥ 2,000 blocks/s: ${r.rate >= 2000 ? 'met' : 'MISSED'}; ${phaseNote(r.phases, r.blocks)}; load ${load()} |`,
      );
    } finally {
      await net.stop();
    }
  }
  {
    const senders = Array.from({ length: 1000 }, () => randomKeyPair());
    const blocks = Number(process.env.BENCH_SYNC_TX_BLOCKS ?? 20);
    const fundingEnd = 1 + Math.ceil(senders.length / 1000);
    log(`  prebuilding ${blocks} blocks of ${senders.length} transfers ...`);
    const net = await network({
      blockTimeMs: 1000,
      prebuilt: fundingEnd + blocks,
      fund: senders,
      load: { senders, blocks },
      start: [0],
    });
    log('  syncing ...');
    try {
      while ((await height(net.nodes[0].api_url)) < fundingEnd + blocks) await sleep(100);
      const r = await timeSync(net, fundingEnd + blocks);
      // The pass includes the funding blocks (1,000 transfers each, as many as a load block).
      const txRate = r.rate * senders.length;
      rows.push(
        `| late full node sync, blocks of ${senders.length.toLocaleString()} transfers | ${Math.round(txRate).toLocaleString()} transfers/s re-executed (${r.rate.toFixed(1)} blocks/s) | ${blocks} blocks × ${senders.length.toLocaleString()} native transfers from as many senders: every signature verified, executed, state root checked; goal ≥ 20,000 transfers/s: ${txRate >= 20_000 ? 'met' : 'MISSED'}; ${phaseNote(r.phases, r.blocks)}; load ${load()} |`,
      );
    } finally {
      await net.stop();
    }
  }
  return rows;
}

/**
 * Start the full node and time its import: from its own 'synced' log line (blocks imported by the
 * catch-up pass and the pass's duration: the import itself, without process start and handshakes).
 */
async function timeSync(
  net: Network,
  target: number,
): Promise<{ rate: number; blocks: number; totalMs: number; phases?: Phases }> {
  const url = net.nodes[4].api_url;
  const t0 = performance.now();
  const r = startNode(net.nodes[4], [], { NATIVE_LOG_LEVEL: 'info' });
  net.running.set(4, r);
  while ((await height(url)) < target) await sleep(20);
  const totalMs = performance.now() - t0;
  let pass: { imported: number; elapsed_ms: number; phases?: Phases } = { imported: 0, elapsed_ms: 1 };
  await sleep(200);
  for (const line of r.logs.join('').split('\n')) {
    if (!line.includes('"synced"') && !line.includes('"syncing"')) continue;
    const o = JSON.parse(line) as typeof pass;
    if (o.imported > pass.imported) pass = o;
  }
  return { rate: pass.imported / (pass.elapsed_ms / 1000), blocks: pass.imported, totalMs, phases: pass.phases };
}

export async function benchNetwork(log: (s: string) => void = () => undefined, only?: 'live' | 'sync'): Promise<string[]> {
  const rows: string[] = [];
  if (only !== 'sync') {
    log('network: live 4-validator devnet ...');
    rows.push(...(await liveNetworkRows(log)));
  }
  if (only !== 'live') {
    log('network: late full-node sync ...');
    rows.push(...(await syncRows(log)));
  }
  return ['| Measurement | Result | Notes |', '| --- | --- | --- |', ...rows];
}

/** What bounds the missed targets (profiles of the node on this machine), written under the rows. */
const NETWORK_NOTES = [
  '- Bounds. Throughput under load: every transaction is admitted by all 4 validators (decode, signature,',
  '  state checks: ~0.1-0.15 ms of CPU each) and executed by all 4, all on the same 2 shared cores as the',
  '  load generator, so the network carries well under 1,000 tx/s here while the interval stays at 1 s (slot',
  '  boundaries, one execution per block per node). Sync of empty blocks: ~1.4 ms per block on a loaded',
  "  core — the proposer's and the certificate's signatures (~20%; a last_commit equal to the parent's",
  '  verified certificate is no longer verified again), the staking end-block records and reward',
  '  distribution (~25%), the atomic RocksDB commit (~30%); 2,000 blocks/s would need these per-block fixed',
  '  costs cut ~4x. Sync of transfers: every signature is verified (libsecp256k1 ~15k/s per core, ~27k/s on',
  '  both) before the block executes, so 20k transfers/s re-executed is beyond 2 cores with verification on.',
];

/**
 * A partial run (`live` or `sync`): only its rows of the "## Network" section are replaced (matched by
 * their first cell), and the notes under the table; the other rows keep their own date and load.
 */
function replaceRows(md: string, rows: string[]): string {
  const start = md.indexOf('## Network');
  if (start < 0) return md;
  const next = md.indexOf('\n## ', start + 1);
  const end = next < 0 ? md.length : next + 1;
  const lines = md.slice(start, end).split('\n');
  const firstCell = (l: string) => l.split('|')[1]?.trim();
  for (const row of rows.slice(2)) {
    const at = lines.findIndex((l) => l.startsWith('|') && firstCell(l) === firstCell(row));
    if (at >= 0) lines[at] = row;
    else lines.splice(lines.findLastIndex((l) => l.startsWith('|')) + 1, 0, row);
  }
  const tableEnd = lines.findLastIndex((l) => l.startsWith('|'));
  const section = [...lines.slice(0, tableEnd + 1), '', ...NETWORK_NOTES, '', ''].join('\n');
  return `${md.slice(0, start)}${section}${md.slice(end)}`;
}

/** Replace the "## Network" section of bench/RESULTS.md (only the rows run, for a partial run). */
function writeSection(rows: string[], partial: boolean): void {
  const file = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
  const md = readFileSync(file, 'utf8');
  if (partial) {
    writeFileSync(file, replaceRows(md, rows));
    return;
  }
  const section = [
    '## Network: a 4-validator devnet on this machine',
    '',
    `- Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run build && node dist/bench/network.js --write\` (4 validator`,
    '  processes and a full node on 127.0.0.1, libp2p, BFT from height 1, `--block-time-ms 1000`; the sync rows',
    "  prebuild the chain with the validators' keys, then a fresh full node syncs it from one validator).",
    `  1-min load average at the end of the run: ${load()} (2 shared cores; other engineers' suites running).`,
    '',
    ...rows,
    '',
    ...NETWORK_NOTES,
    '',
    '',
  ].join('\n');
  const start = md.indexOf('## Network');
  const next = start < 0 ? -1 : md.indexOf('\n## ', start + 1);
  const out =
    start < 0 ? `${md.trimEnd()}\n\n${section}` : `${md.slice(0, start)}${section}${next < 0 ? '' : md.slice(next + 1)}`;
  writeFileSync(file, out);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const only = process.argv.find((a) => a === 'live' || a === 'sync') as 'live' | 'sync' | undefined;
  benchNetwork((s) => process.stdout.write(`${s}\n`), only).then((rows) => {
    process.stdout.write(`${rows.join('\n')}\n`);
    if (process.argv.includes('--write')) writeSection(rows, only !== undefined);
    process.exit(0);
  });
}
