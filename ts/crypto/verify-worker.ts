/**
 * Entry point of the signature verification thread (verify-thread.ts): each message holds n signatures,
 * digests and public keys packed back to back; the answer is one byte per signature (1 valid). The
 * batch runs in the native addon, which spreads it over all cores.
 */
import { parentPort } from 'node:worker_threads';
import { crypto } from './index.js';

export interface VerifyRequest {
  id: number;
  n: number;
  sigs: Uint8Array;
  digests: Uint8Array;
  pubs: Uint8Array;
}

export interface VerifyReply {
  id: number;
  ok: Uint8Array;
}

const slices = (buf: Uint8Array, n: number, size: number): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => buf.subarray(i * size, (i + 1) * size));

parentPort?.on('message', (m: VerifyRequest) => {
  let ok: Uint8Array;
  try {
    const results = crypto().verifyBatch(slices(m.sigs, m.n, 64), slices(m.digests, m.n, 32), slices(m.pubs, m.n, 65));
    ok = Uint8Array.from(results, (r) => (r ? 1 : 0));
  } catch {
    ok = new Uint8Array(m.n);
  }
  parentPort?.postMessage({ id: m.id, ok } satisfies VerifyReply, [ok.buffer as ArrayBuffer]);
});
