/**
 * Entry point of a signature verification thread (verify-thread.ts): each message holds n signatures,
 * digests and public keys packed back to back; the answer is one byte per signature (1 valid). The
 * signatures are verified one after another on this thread: the native batch call would hand them to
 * the addon's shared thread pool, where they would hold up the main thread's own parallel hashing (a
 * block's transactions root) until the whole batch is done.
 */
import { parentPort } from 'node:worker_threads';
import { loadNativeBackend } from './native.js';

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

parentPort?.on('message', (m: VerifyRequest) => {
  const ok = new Uint8Array(m.n);
  // Only the addon (the main thread verifies on its own thread without it): the JS twin is not loaded here.
  const c = loadNativeBackend();
  if (!c) {
    parentPort?.postMessage({ id: m.id, ok } satisfies VerifyReply, [ok.buffer as ArrayBuffer]);
    return;
  }
  for (let i = 0; i < m.n; i++) {
    try {
      const valid = c.verify(
        m.sigs.subarray(i * 64, (i + 1) * 64),
        m.digests.subarray(i * 32, (i + 1) * 32),
        m.pubs.subarray(i * 65, (i + 1) * 65),
      );
      ok[i] = valid ? 1 : 0;
    } catch {
      ok[i] = 0;
    }
  }
  parentPort?.postMessage({ id: m.id, ok } satisfies VerifyReply, [ok.buffer as ArrayBuffer]);
});
