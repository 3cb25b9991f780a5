/**
 * Signature verification off the main thread: worker threads (verify-worker.ts, one per core but the
 * main thread's) verify a batch between them while the main thread goes on — a syncing node imports one
 * run of blocks while the next run's signatures are being verified, so on two cores one verifies and
 * one imports. Without the native addon, batches are verified on the calling thread (the JS backend
 * would gain nothing from threads of its own here).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { crypto } from './backend.js';
import type { VerifyReply, VerifyRequest } from './verify-worker.js';

/** Verification threads: every core but the one the main thread works on (at least one, at most 8). */
const THREADS = Math.max(1, Math.min(8, Number(process.env.NATIVE_VERIFY_THREADS ?? availableParallelism() - 1)));

const SIG = 64;
const DIGEST = 32;
const PUB = 65;

/**
 * Signatures to verify, written back to back as they are added (64-byte compact signature, 32-byte
 * digest, 65-byte uncompressed key each): the batch goes to the threads as three buffers, without an
 * object per signature.
 */
export class SignatureBatch {
  private sigs = new Uint8Array(SIG * 256);
  private digests = new Uint8Array(DIGEST * 256);
  private pubs = new Uint8Array(PUB * 256);
  length = 0;

  /** Add one; the signature and key may be given as hex (already checked to be 128 and 130 hex digits). */
  add(sig: Uint8Array | string, digest: Uint8Array, pub: Uint8Array | string): void {
    if (this.length * SIG === this.sigs.length) this.grow();
    const i = this.length++;
    put(this.sigs, i * SIG, sig, SIG);
    put(this.digests, i * DIGEST, digest, DIGEST);
    put(this.pubs, i * PUB, pub, PUB);
  }

  private grow(): void {
    const more = (b: Uint8Array) => {
      const out = new Uint8Array(b.length * 2);
      out.set(b);
      return out;
    };
    this.sigs = more(this.sigs);
    this.digests = more(this.digests);
    this.pubs = more(this.pubs);
  }

  /** Items [from, to) as a request's three buffers (copies: they are transferred to a thread). */
  slice(from: number, to: number): { sigs: Uint8Array; digests: Uint8Array; pubs: Uint8Array } {
    return {
      sigs: this.sigs.slice(from * SIG, to * SIG),
      digests: this.digests.slice(from * DIGEST, to * DIGEST),
      pubs: this.pubs.slice(from * PUB, to * PUB),
    };
  }

  /** Item i's three parts (views). */
  item(i: number): { sig: Uint8Array; digest: Uint8Array; pub: Uint8Array } {
    return {
      sig: this.sigs.subarray(i * SIG, (i + 1) * SIG),
      digest: this.digests.subarray(i * DIGEST, (i + 1) * DIGEST),
      pub: this.pubs.subarray(i * PUB, (i + 1) * PUB),
    };
  }
}

function put(out: Uint8Array, at: number, v: Uint8Array | string, size: number): void {
  if (typeof v === 'string') {
    if (Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(v, at, size, 'hex') !== size)
      throw new TypeError(`expected ${size} bytes of hex`);
    return;
  }
  if (v.length !== size) throw new TypeError(`expected ${size} bytes, got ${v.length}`);
  out.set(v, at);
}

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

/** Items [from, to) of a batch, verified on one thread. */
function verifyOn(t: Thread, batch: SignatureBatch, from: number, to: number): Promise<Uint8Array> {
  const req: VerifyRequest = { id: nextId++, n: to - from, ...batch.slice(from, to) };
  const result = new Promise<Uint8Array>((resolve, reject) => t.waiting.set(req.id, { resolve, reject }));
  t.worker.ref();
  t.worker.postMessage(req, [req.sigs.buffer as ArrayBuffer, req.digests.buffer as ArrayBuffer, req.pubs.buffer as ArrayBuffer]);
  return result;
}

/** Verify a batch on the verification threads: one byte per signature, 1 when it verifies. */
export async function verifyOffThread(batch: SignatureBatch): Promise<Uint8Array> {
  const n = batch.length;
  if (n === 0) return new Uint8Array(0);
  if (crypto().name !== 'native') {
    const items = Array.from({ length: n }, (_, i) => batch.item(i));
    const ok = crypto().verifyBatch(
      items.map((x) => x.sig),
      items.map((x) => x.digest),
      items.map((x) => x.pub),
    );
    return Uint8Array.from(ok, (b) => (b ? 1 : 0));
  }
  const ts = pool();
  const share = Math.ceil(n / ts.length);
  const parts = await Promise.all(ts.map((t, i) => verifyOn(t, batch, Math.min(n, i * share), Math.min(n, (i + 1) * share))));
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Stop the verification threads (tests, shutdown); a later call starts new ones. */
export async function stopVerifyThread(): Promise<void> {
  const ts = threads;
  threads = [];
  await Promise.all(ts.map((t) => t.worker.terminate()));
}
