/**
 * Signature verification off the main thread: worker threads (verify-worker.ts, one per core but the
 * main thread's) verify a batch between them while the main thread goes on — a syncing node imports one
 * run of blocks while the next run's signatures are being verified, so on two cores one verifies and
 * one imports. Without the native addon, batches are verified on the calling thread (the JS backend
 * would gain nothing from threads of its own here).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { crypto } from './index.js';
import type { VerifyReply, VerifyRequest } from './verify-worker.js';

export interface SignatureTriple {
  sig: Uint8Array;
  digest: Uint8Array;
  pub: Uint8Array;
}

/** Verification threads: every core but the one the main thread works on (at least one). */
const THREADS = Math.max(1, Math.min(8, availableParallelism() - 1));

interface Thread {
  worker: Worker;
  waiting: Map<number, { resolve: (ok: Uint8Array) => void; reject: (err: Error) => void }>;
}

let threads: Thread[] = [];
let nextId = 0;

function startThread(): Thread {
  const t: Thread = { worker: new Worker(new URL('./verify-worker.js', import.meta.url)), waiting: new Map() };
  t.worker.on('message', (m: VerifyReply) => {
    const p = t.waiting.get(m.id);
    t.waiting.delete(m.id);
    if (t.waiting.size === 0) t.worker.unref();
    p?.resolve(m.ok);
  });
  const fail = (err: Error) => {
    threads = threads.filter((x) => x !== t);
    for (const p of t.waiting.values()) p.reject(err);
    t.waiting.clear();
  };
  t.worker.on('error', fail);
  t.worker.on('exit', (code) => fail(new Error(`signature verification thread exited (${code})`)));
  t.worker.unref();
  return t;
}

function pool(): Thread[] {
  while (threads.length < THREADS) threads.push(startThread());
  return threads;
}

/** One thread's share of a batch, verified there. */
function verifyOn(t: Thread, items: readonly SignatureTriple[]): Promise<Uint8Array> {
  const req: VerifyRequest = {
    id: nextId++,
    n: items.length,
    sigs: pack(items, (x) => x.sig, 64),
    digests: pack(items, (x) => x.digest, 32),
    pubs: pack(items, (x) => x.pub, 65),
  };
  const result = new Promise<Uint8Array>((resolve, reject) => t.waiting.set(req.id, { resolve, reject }));
  t.worker.ref();
  t.worker.postMessage(req, [req.sigs.buffer as ArrayBuffer, req.digests.buffer as ArrayBuffer, req.pubs.buffer as ArrayBuffer]);
  return result;
}

function pack(items: readonly SignatureTriple[], pick: (t: SignatureTriple) => Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(items.length * size);
  items.forEach((t, i) => {
    const b = pick(t);
    if (b.length !== size) throw new TypeError(`expected ${size} bytes, got ${b.length}`);
    out.set(b, i * size);
  });
  return out;
}

/**
 * Verify signatures (64-byte compact, 32-byte digest, 65-byte uncompressed key each) on the verification
 * thread; one result per item. Items of another shape are invalid.
 */
export async function verifyOffThread(items: readonly SignatureTriple[]): Promise<boolean[]> {
  if (items.length === 0) return [];
  const wellFormed = items.every((t) => t.sig.length === 64 && t.digest.length === 32 && t.pub.length === 65);
  if (crypto().name !== 'native' || !wellFormed) {
    return crypto().verifyBatch(
      items.map((t) => t.sig),
      items.map((t) => t.digest),
      items.map((t) => t.pub),
    );
  }
  const ts = pool();
  const share = Math.ceil(items.length / ts.length);
  const parts = await Promise.all(ts.map((t, i) => verifyOn(t, items.slice(i * share, (i + 1) * share))));
  const out: boolean[] = [];
  for (const part of parts) for (const b of part) out.push(b === 1);
  return out;
}

/** Stop the verification threads (tests, shutdown); a later call starts new ones. */
export async function stopVerifyThread(): Promise<void> {
  const ts = threads;
  threads = [];
  await Promise.all(ts.map((t) => t.worker.terminate()));
}
