/**
 * Signature verification off the main thread: one worker thread (verify-worker.ts) runs batches in the
 * native addon (all cores) while the main thread goes on — a syncing node imports one run of blocks
 * while the next run's signatures are being verified. Without the native addon, batches are verified on
 * the calling thread (the JS backend would gain nothing from a thread of its own here).
 */
import { Worker } from 'node:worker_threads';
import { crypto } from './index.js';
import type { VerifyReply, VerifyRequest } from './verify-worker.js';

export interface SignatureTriple {
  sig: Uint8Array;
  digest: Uint8Array;
  pub: Uint8Array;
}

let worker: Worker | null = null;
let nextId = 0;
const waiting = new Map<number, { resolve: (ok: boolean[]) => void; reject: (err: Error) => void }>();

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('./verify-worker.js', import.meta.url));
  w.on('message', (m: VerifyReply) => {
    const p = waiting.get(m.id);
    waiting.delete(m.id);
    if (waiting.size === 0) w.unref();
    p?.resolve(Array.from(m.ok, (b) => b === 1));
  });
  const fail = (err: Error) => {
    worker = null;
    for (const p of waiting.values()) p.reject(err);
    waiting.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`signature verification thread exited (${code})`)));
  w.unref();
  worker = w;
  return w;
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
  const req: VerifyRequest = {
    id: nextId++,
    n: items.length,
    sigs: pack(items, (t) => t.sig, 64),
    digests: pack(items, (t) => t.digest, 32),
    pubs: pack(items, (t) => t.pub, 65),
  };
  const w = thread();
  const result = new Promise<boolean[]>((resolve, reject) => waiting.set(req.id, { resolve, reject }));
  w.ref();
  w.postMessage(req, [req.sigs.buffer as ArrayBuffer, req.digests.buffer as ArrayBuffer, req.pubs.buffer as ArrayBuffer]);
  return result;
}

/** Stop the verification thread (tests, shutdown); a later call starts a new one. */
export async function stopVerifyThread(): Promise<void> {
  const w = worker;
  worker = null;
  await w?.terminate();
}
