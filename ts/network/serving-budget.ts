/**
 * Budgets for answering peers' requests (`P/blocks/1`, `P/block-by-hash/1`, `P/consensus-sync/1`, the snapshot ones): how
 * many responses run at once, in total and per peer, and how many bytes they hold in flight (read from
 * storage, not yet taken by the connection). Without them 1,000 slow-read range requests took a node
 * from 225 MiB to 1.9 GB (issue 29, finding 4). The numbers are in docs/p2p.md ("Serving budgets").
 */

export interface ServingLimits {
  /** Responses of this protocol being answered at once, over all peers. */
  responses: number;
  /** ... and from one peer. An honest node never has more than this open (docs/p2p.md). */
  responsesPerPeer: number;
  /** Bytes held in flight by this protocol's responses, over all peers and per peer. */
  bytes: number;
  bytesPerPeer: number;
}

const MiB = 1024 * 1024;

/** Block ranges: 1,024 blocks or 8 MiB a response, streamed from storage. */
export const RANGE_SERVING: ServingLimits = { responses: 8, responsesPerPeer: 2, bytes: 32 * MiB, bytesPerPeer: 8 * MiB };
/** One block by hash (up to 32 MiB: one response may exceed the byte budget alone, see `waitForBytes`). */
export const BLOCK_BY_HASH_SERVING: ServingLimits = {
  responses: 4,
  responsesPerPeer: 2,
  bytes: 32 * MiB,
  bytesPerPeer: 32 * MiB,
};
/** A height's proposals and votes (at most 1,000 small messages and the proposals' blocks). */
export const CONSENSUS_SYNC_SERVING: ServingLimits = {
  responses: 8,
  responsesPerPeer: 2,
  bytes: 16 * MiB,
  bytesPerPeer: 8 * MiB,
};

/** A state snapshot's chunk (at most 4 MiB) or manifest (at most 16 MiB: may exceed a share alone). */
export const SNAPSHOT_CHUNK_SERVING: ServingLimits = {
  responses: 4,
  responsesPerPeer: 2,
  bytes: 16 * MiB,
  bytesPerPeer: 16 * MiB,
};
/** The list of snapshots offered (one small JSON frame). */
export const SNAPSHOTS_SERVING: ServingLimits = { responses: 8, responsesPerPeer: 2, bytes: 1 * MiB, bytesPerPeer: 64 * 1024 };

/** Why a response could not start: the peer has its share open (abuse), or the node is busy (no blame). */
export type Refusal = 'peer' | 'global';

/** One admitted response: its bytes in flight are counted until it ends. */
export interface ServingSlot {
  /** Count bytes just read for this response (they stay counted until `sent`). */
  hold(bytes: number): void;
  /** Bytes the connection has taken (or the response dropped). */
  sent(bytes: number): void;
  /** Wait until this response may read more (bytes in flight under the budgets); false after `deadlineMs`. */
  waitForBytes(deadlineMs: number): Promise<boolean>;
  /** End the response: its slot and its bytes still held are given back. */
  release(): void;
}

export class ServingBudget {
  private open = 0;
  private bytes = 0;
  private readonly perPeer = new Map<string, { open: number; bytes: number }>();
  private waiters: (() => void)[] = [];

  constructor(readonly limits: ServingLimits) {}

  /** Responses running now and bytes they hold (tests, metrics). */
  usage(peer?: string): { responses: number; bytes: number } {
    if (peer === undefined) return { responses: this.open, bytes: this.bytes };
    const p = this.perPeer.get(peer);
    return { responses: p?.open ?? 0, bytes: p?.bytes ?? 0 };
  }

  /** Admit a response for `peer`, or say why not. */
  tryAcquire(peer: string): ServingSlot | Refusal {
    const p = this.perPeer.get(peer) ?? { open: 0, bytes: 0 };
    if (p.open >= this.limits.responsesPerPeer) return 'peer';
    if (this.open >= this.limits.responses) return 'global';
    p.open++;
    this.open++;
    this.perPeer.set(peer, p);
    let held = 0;
    let released = false;
    const give = (n: number) => {
      const k = Math.min(n, held);
      held -= k;
      p.bytes -= k;
      this.bytes -= k;
      if (k > 0) this.wake();
    };
    return {
      hold: (n) => {
        if (released) return;
        held += n;
        p.bytes += n;
        this.bytes += n;
      },
      sent: give,
      // A response may always read when it holds nothing itself, even over the budget: one block can be
      // larger than a peer's share (32 MiB), and a response that could never start would never end. The
      // overshoot is therefore one read (a chunk of blocks, or one block) per running response.
      waitForBytes: async (deadlineMs) => {
        const until = Date.now() + deadlineMs;
        while (held > 0 && (this.bytes >= this.limits.bytes || p.bytes >= this.limits.bytesPerPeer)) {
          const left = until - Date.now();
          if (left <= 0) return false;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, left);
            this.waiters.push(() => {
              clearTimeout(t);
              resolve();
            });
          });
        }
        return true;
      },
      release: () => {
        if (released) return;
        give(held);
        released = true;
        p.open--;
        this.open--;
        if (p.open === 0 && p.bytes === 0) this.perPeer.delete(peer);
        this.wake();
      },
    };
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
