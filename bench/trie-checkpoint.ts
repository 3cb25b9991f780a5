/**
 * Native trie checkpoints (native/src/checkpoint.rs) and the trie's memory per key, at N random keys:
 * `node dist/bench/trie-checkpoint.js 1000000,10000000` (also `node dist/bench/storage.js checkpoint ...`).
 *
 * Per size, one child process builds the trie (raw addon calls: no JS values map), measures RSS per key, saves
 * a checkpoint (the call's own time, the event loop's longest gap while the file is written, the total) and
 * saves again while 10,000-key blocks are applied back to back (their time against blocks without a save);
 * a second child process loads the file (a restart) and reports time, RSS per key and the root.
 * BENCH_BEFORE_ADDON=path also builds the trie with that addon (e.g. main's) for a before/after of RSS per key.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NativeAddon, type NativeTrieHandle, loadNativeAddon } from '../ts/crypto/native.js';
import type { Row } from './ledger.js';

const BATCH = 100_000;
const BLOCK = 10_000;
const KEY = 21;
const VALUE = 40;

const gib = (b: number): string => `${(b / 2 ** 30).toFixed(2)} GiB`;
const ms = (x: number): string => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

function rss(): number {
  global.gc?.();
  return process.memoryUsage().rss;
}

function addonOrThrow(): NativeAddon {
  const addon = loadNativeAddon();
  if (!addon) throw new Error('native addon not built');
  return addon;
}

/** n keys of KEY bytes and values of VALUE bytes, laid out as trieUpdate takes them. */
function batch(n: number): [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array] {
  const ends = (width: number) => new Uint8Array(Uint32Array.from({ length: n }, (_, i) => (i + 1) * width).buffer);
  return [randomBytes(n * KEY), ends(KEY), randomBytes(n * VALUE), ends(VALUE), new Uint8Array(n)];
}

/** Keys already in the trie with new values: an update of `BLOCK` existing accounts. */
function block(keys: Buffer): [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array] {
  const [, keyEnds, values, valueEnds, deletes] = batch(BLOCK);
  const picked = Buffer.allocUnsafe(BLOCK * KEY);
  for (let i = 0; i < BLOCK; i++) {
    const at = Math.floor(Math.random() * (keys.length / KEY)) * KEY;
    keys.copy(picked, i * KEY, at, at + KEY);
  }
  return [picked, keyEnds, values, valueEnds, deletes];
}

function buildTrie(addon: NativeAddon, n: number): { handle: NativeTrieHandle; sample: Buffer; buildMs: number } {
  const handle = addon.trieNew();
  const t0 = performance.now();
  let sample = Buffer.alloc(0);
  for (let done = 0; done < n; done += BATCH) {
    const b = batch(Math.min(BATCH, n - done));
    if (done === 0) sample = Buffer.from(b[0]); // keys for the update blocks below
    addon.trieUpdate(handle, ...b);
  }
  addon.trieRoot(handle);
  return { handle, sample, buildMs: performance.now() - t0 };
}

/** Longest gap between ticks of a 1 ms timer while `work` runs: how long the event loop was held. */
async function longestGap<T>(work: () => Promise<T>): Promise<{ value: T; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 1);
  try {
    const value = await work();
    return { value, gapMs };
  } finally {
    clearInterval(timer);
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Child: build, measure memory, save twice (idle, then under updates); prints one JSON line. */
async function buildAndSave(n: number, path: string): Promise<void> {
  const addon = addonOrThrow();
  const save = addon.trieSave;
  const rss0 = rss();
  const { handle, sample, buildMs } = buildTrie(addon, n);
  const rssPerKey = (rss() - rss0) / n;
  // Blocks of BLOCK updates + root (as a block's commit does), timed: before any save, and during one below.
  const blockMs = (): number => {
    const b = block(sample);
    const s = performance.now();
    addon.trieUpdate(handle, ...b);
    addon.trieRoot(handle);
    return performance.now() - s;
  };
  const before: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < 7; i++) before.push(blockMs());
  const cpu = process.cpuUsage(cpu0);
  const blockCpuMs = (cpu.user + cpu.system) / 1000 / 7; // all threads: the trie hashes on two
  if (typeof save !== 'function') {
    process.stdout.write(`${JSON.stringify({ n, buildMs, rssPerKey, blocksBefore: before, blockCpuMs })}\n`);
    return;
  }
  // 1. Idle save: the call's own time (snapshot) and the event loop's longest gap until the file is durable.
  const idlePath = `${path}.idle`;
  const t0 = performance.now();
  let callMs = 0;
  const idle = await longestGap(() => {
    const p = save.call(addon, handle, Buffer.from(idlePath), Buffer.alloc(0));
    callMs = performance.now() - t0;
    return p;
  });
  const saveMs = performance.now() - t0;
  const fileBytes = statSync(idlePath).size;
  rmSync(idlePath, { force: true });

  // 2. Blocks back to back while a save runs.
  // The file saved while blocks change the trie must hold the root at its start (the load child checks).
  const root = Buffer.from(addon.trieRoot(handle)).toString('hex');
  const during: number[] = [];
  let running = true;
  const t1 = performance.now();
  const busy = save.call(addon, handle, Buffer.from(path), Buffer.from(root, 'hex')).finally(() => {
    running = false;
  });
  while (running) {
    during.push(blockMs());
    await tick();
  }
  await busy;
  const busySaveMs = performance.now() - t1;
  process.stdout.write(
    `${JSON.stringify({ n, buildMs, rssPerKey, root, callMs, gapMs: idle.gapMs, saveMs, fileBytes, blocksBefore: before, blockCpuMs, blocksDuring: during, busySaveMs })}\n`,
  );
}

/** Child: load the checkpoint as a restarted node would; prints one JSON line. */
function loadAndReport(path: string): void {
  const addon = addonOrThrow();
  const rss0 = rss();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const got = addon.trieLoad?.(Buffer.from(path));
  const loadMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (!got || typeof got === 'string') throw new Error(`load failed: ${got}`);
  const root = Buffer.from(addon.trieRoot(got.handle)).toString('hex');
  const n = addon.trieSize(got.handle);
  process.stdout.write(
    `${JSON.stringify({ loadMs, loadCpuMs: (cpu.user + cpu.system) / 1000, root, meta: Buffer.from(got.meta).toString('hex'), rssPerKey: (rss() - rss0) / n })}\n`,
  );
}

function child<T>(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const proc = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) =>
    proc.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim()) as T) : reject(new Error(`${args[0]} exited ${code}`)),
    ),
  );
}

interface Saved {
  n: number;
  buildMs: number;
  rssPerKey: number;
  root: string;
  callMs: number;
  gapMs: number;
  saveMs: number;
  fileBytes: number;
  blocksBefore: number[];
  blockCpuMs: number;
  blocksDuring: number[];
  busySaveMs: number;
}

export async function benchCheckpoint(n: number): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-ckpt-'));
  const path = join(dir, 'trie.ckpt');
  const size = n.toLocaleString();
  try {
    const rows: Row[] = [];
    const beforeAddon = process.env.BENCH_BEFORE_ADDON;
    if (beforeAddon) {
      const before = await child<{ rssPerKey: number; blocksBefore: number[]; blockCpuMs: number }>(
        ['build', String(n), join(dir, 'before.ckpt')],
        {
          ...process.env,
          NATIVE_ADDON_PATH: beforeAddon,
        },
      );
      rows.push({
        name: `trie RSS per key, ${size} keys, before (${beforeAddon})`,
        value: `${before.rssPerKey.toFixed(0)} B`,
        note: `${gib(before.rssPerKey * n)}; a 10,000-key update + root: median ${ms(median(before.blocksBefore))}, CPU ${ms(before.blockCpuMs)}`,
      });
    }
    const s = await child<Saved>(['build', String(n), path]);
    const l = await child<{ loadMs: number; loadCpuMs: number; root: string; meta: string; rssPerKey: number }>(['load', path]);
    const same = l.root === s.root && l.meta === s.root;
    rows.push(
      {
        name: `trie RSS per key, ${size} keys (built by updates)`,
        value: `${s.rssPerKey.toFixed(0)} B`,
        note: `${gib(s.rssPerKey * n)}; built in ${(s.buildMs / 1000).toFixed(1)} s; a 10,000-key update + root: median ${ms(median(s.blocksBefore))}, CPU ${ms(s.blockCpuMs)}`,
      },
      {
        name: `checkpoint save, ${size} keys`,
        value: `${(s.saveMs / 1000).toFixed(2)} s`,
        note: `file ${(s.fileBytes / 2 ** 20).toFixed(0)} MiB (${(s.fileBytes / n).toFixed(0)} B/key); JS thread: the call ${ms(s.callMs)}, longest event-loop gap while writing ${ms(s.gapMs)}`,
      },
      {
        name: `10,000-key update + root during a save, ${size} keys`,
        value: `median ${ms(median(s.blocksDuring))}, max ${ms(Math.max(...s.blocksDuring))}`,
        note: `without a save: median ${ms(median(s.blocksBefore))}, max ${ms(Math.max(...s.blocksBefore))}; ${s.blocksDuring.length} blocks during a save of ${(s.busySaveMs / 1000).toFixed(2)} s`,
      },
      {
        name: `checkpoint load (a restart), ${size} keys`,
        value: `${(l.loadMs / 1000).toFixed(2)} s`,
        note: `CPU ${(l.loadCpuMs / 1000).toFixed(2)} s; the file saved during the blocks; RSS per key ${l.rssPerKey.toFixed(0)} B (${gib(l.rssPerKey * n)}); root ${same ? 'and meta equal the root at the save' : 'DIFFERS from the root at the save'}`,
      },
    );
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [what = '1000000', a, b] = process.argv.slice(2);
  if (what === 'build') return buildAndSave(Number(a), b as string);
  if (what === 'load') return loadAndReport(a as string);
  for (const n of what.split(',').map(Number)) {
    for (const r of await benchCheckpoint(n)) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
  }
}

if (process.argv[1]?.endsWith('trie-checkpoint.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
