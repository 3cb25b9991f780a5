import { crypto } from '../crypto/index.js';

interface Pending {
  sig: Uint8Array;
  digest: Uint8Array;
  pub: Uint8Array;
  resolve: (ok: boolean) => void;
}

/**
 * Collects the signature checks of every submission parsed in one event-loop turn and verifies
 * them in one verifyBatch call (parallel over all cores in the native addon). Results resolve in
 * arrival order, so the stateful checks that follow also run in arrival order.
 */
export class SignatureBatcher {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly maxBatch = 4096) {}

  verify(sig: Uint8Array, digest: Uint8Array, pub: Uint8Array): Promise<boolean> {
    return new Promise((resolve) => {
      this.queue.push({ sig, digest, pub, resolve });
      if (this.queue.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const q = this.queue;
    if (q.length === 0) return;
    this.queue = [];
    let results: boolean[];
    try {
      results = crypto().verifyBatch(
        q.map((p) => p.sig),
        q.map((p) => p.digest),
        q.map((p) => p.pub),
      );
    } catch {
      results = q.map(() => false);
    }
    q.forEach((p, i) => p.resolve(results[i] === true));
  }
}
