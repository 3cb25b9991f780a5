/**
 * Crypto micro-benchmarks: JS twin vs native addon. Each measurement runs for a bounded time budget.
 * Used by the bench runner (benchCrypto) and runnable directly: `node dist/bench/crypto.js`.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { pathToFileURL } from 'node:url';
import { jsBackend } from '../ts/crypto/js.js';
import { loadNativeAddon, loadNativeBackend, nativeLoadError } from '../ts/crypto/native.js';
import type { CryptoBackend } from '../ts/crypto/types.js';

export interface BenchResult {
  name: string;
  backend: string;
  opsPerSec: number;
  note?: string;
}

const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 700);
const UNIQUE_SIGS = 1024; // signing with noble is ~1k/s, so larger sets tile these

/**
 * Calls `round` (which performs `opsPerRound` operations) until the budget is spent, after a short
 * warm-up; returns operations per second. At least one timed round always runs.
 */
function measure(round: () => unknown, opsPerRound: number, budgetMs = BUDGET_MS): number {
  const warmEnd = performance.now() + Math.min(100, budgetMs / 5);
  do round();
  while (performance.now() < warmEnd);
  let ops = 0;
  const start = performance.now();
  let now = start;
  do {
    round();
    ops += opsPerRound;
    now = performance.now();
  } while (now - start < budgetMs);
  return (ops * 1000) / (now - start);
}

function det(seed: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  let h = keccak_256(new Uint8Array([seed & 255, (seed >> 8) & 255, (seed >> 16) & 255, 0x5a]));
  for (let off = 0; off < len; off += 32) {
    out.set(h.subarray(0, Math.min(32, len - off)), off);
    h = keccak_256(h);
  }
  return out;
}

interface SigSet {
  sigs: Uint8Array[];
  digests: Uint8Array[];
  pubkeys: Uint8Array[];
  recids: number[];
}

function makeSigs(n: number): SigSet {
  const u: SigSet = { sigs: [], digests: [], pubkeys: [], recids: [] };
  const keys = Array.from({ length: 32 }, (_, i) => det(1_000_000 + i, 32));
  const pubs = keys.map((k) => secp256k1.getPublicKey(k, false));
  for (let i = 0; i < Math.min(n, UNIQUE_SIGS); i++) {
    const digest = det(i, 32);
    const rec = secp256k1.sign(digest, keys[i % 32], { prehash: false, format: 'recovered' });
    u.sigs.push(rec.slice(1));
    u.digests.push(digest);
    u.pubkeys.push(pubs[i % 32]);
    u.recids.push(rec[0]);
  }
  const tile = <T>(a: T[]): T[] => Array.from({ length: n }, (_, i) => a[i % a.length]);
  return { sigs: tile(u.sigs), digests: tile(u.digests), pubkeys: tile(u.pubkeys), recids: tile(u.recids) };
}

function bloomCorpus(n: number): { blooms: Uint8Array[]; groups: Uint8Array[][] } {
  const addrA = det(7001, 20);
  const addrB = det(7002, 20);
  const topic = det(7003, 32);
  const blooms: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const bloom = new Uint8Array(256);
    for (let k = 0; k < 4; k++) jsBackend.bloomAdd(bloom, det(100_000 + i * 4 + k, 32));
    if (i % 10 === 0) jsBackend.bloomAdd(bloom, addrA);
    if (i % 3 === 0) jsBackend.bloomAdd(bloom, topic);
    blooms.push(bloom);
  }
  return { blooms, groups: [[addrA, addrB], [topic]] };
}

export async function benchCrypto(): Promise<BenchResult[]> {
  const native = loadNativeBackend();
  const addon = loadNativeAddon();
  const threads = addon?.threads() ?? 0;
  const backends: CryptoBackend[] = native ? [jsBackend, native] : [jsBackend];
  const out: BenchResult[] = [];
  const add = (name: string, backend: string, opsPerSec: number, note?: string) =>
    out.push(
      note ? { name, backend, opsPerSec: Math.round(opsPerSec), note } : { name, backend, opsPerSec: Math.round(opsPerSec) },
    );
  if (!native) add('native addon', 'native', 0, `not loaded: ${nativeLoadError()}`);

  const set = makeSigs(10_000);
  const pool = 256; // per-call benches rotate through this many distinct inputs

  for (const b of backends) {
    let i = 0;
    add(
      'verify (one at a time)',
      b.name,
      measure(() => b.verify(set.sigs[i % pool], set.digests[i % pool], set.pubkeys[i++ % pool]), 1),
    );
  }
  if (native) {
    add(
      'verifyBatch 10k sigs',
      'native',
      measure(() => native.verifyBatch(set.sigs, set.digests, set.pubkeys), 10_000, 1000),
      `rayon, ${threads} threads; ${UNIQUE_SIGS} unique sigs tiled`,
    );
  }
  {
    // The JS twin needs ~20+ s for 10k; measure it on 100-signature slices of the same set.
    let off = 0;
    const slice = () => {
      const s = off;
      off = (off + 100) % 10_000;
      return jsBackend.verifyBatch(set.sigs.slice(s, s + 100), set.digests.slice(s, s + 100), set.pubkeys.slice(s, s + 100));
    };
    add('verifyBatch 10k sigs', 'js', measure(slice, 100), 'single thread; measured on 100-sig slices');
  }
  for (const b of backends) {
    let i = 0;
    add(
      'recover',
      b.name,
      measure(() => b.recover(set.sigs[i % pool], set.recids[i % pool], set.digests[i++ % pool]), 1),
    );
  }

  const inputs64 = Array.from({ length: pool }, (_, i) => det(20_000 + i, 64));
  for (const b of backends) {
    let i = 0;
    add(
      'sha256 (64-byte input)',
      b.name,
      measure(() => b.sha256(inputs64[i++ % pool]), 1),
    );
  }
  for (const b of backends) {
    let i = 0;
    add(
      'keccak256 (64-byte input)',
      b.name,
      measure(() => b.keccak256(inputs64[i++ % pool]), 1),
    );
  }

  const many = Array.from({ length: 100_000 }, (_, i) => inputs64[i % pool]);
  for (const b of backends) {
    add(
      'sha256Many 100k x 64 B',
      b.name,
      measure(() => b.sha256Many(many), 100_000),
      b.name === 'native' ? `items/s, ${threads} threads` : 'items/s',
    );
  }

  const leaves = Array.from({ length: 10_000 }, (_, i) => det(40_000 + i, 32));
  for (const b of backends) {
    add(
      'merkleRoot 10k leaves',
      b.name,
      measure(() => b.merkleRoot(leaves), 1),
      'roots/s',
    );
  }

  const { blooms, groups } = bloomCorpus(10_000);
  for (const b of backends) {
    add(
      'bloomScan 10k blooms',
      b.name,
      measure(() => b.bloomScan(blooms, groups), 1),
      'scans/s; 2 groups, 3 items',
    );
  }
  if (addon) {
    const all = new Uint8Array(blooms.length * 256);
    blooms.forEach((bl, i) => all.set(bl, i * 256));
    add(
      'bloomScan 10k blooms',
      'native (one buffer)',
      measure(() => addon.bloomScan(all, groups), 1),
      'scans/s; blooms concatenated in one Uint8Array',
    );
  }
  return out;
}

/** Plain-text table; speed-up column compares native to js for the same measurement. */
export function formatTable(rows: BenchResult[]): string {
  const js = new Map(rows.filter((r) => r.backend === 'js').map((r) => [r.name, r.opsPerSec]));
  const lines = [['measurement', 'backend', 'ops/s', 'vs js', 'note']];
  for (const r of rows) {
    const base = js.get(r.name);
    const ratio = r.backend !== 'js' && base ? `${(r.opsPerSec / base).toFixed(1)}x` : '';
    lines.push([r.name, r.backend, r.opsPerSec.toLocaleString('en-US'), ratio, r.note ?? '']);
  }
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  return lines
    .map((l) =>
      l
        .map((cell, c) => (c === 2 || c === 3 ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchCrypto();
  console.log(formatTable(rows));
}
