/**
 * Which snapshot a joining node restores (docs/p2p.md, "State sync"): the newest one offered, with the same id,
 * by at least two peers, whose block the node can verify — against the operator's `--state-sync-trust
 * HEIGHT:HASH` (CometBFT's trust height and hash) when given, else by the light client (snapshot-trust.ts).
 */
import type { SnapshotOffer } from '../network/index.js';

/** Peers that must offer the same snapshot (same height and id) before it is chosen. */
export const MIN_SNAPSHOT_PEERS = 2;

/** `--state-sync-trust HEIGHT:HASH`: a block the operator vouches for. */
export interface StateSyncTrust {
  height: number;
  /** Hex, lower case, no 0x (as in blocks). */
  hash: string;
}

/** Parse `HEIGHT:HASH` (HASH 32 bytes of hex, 0x optional); throws an Error that says what is wrong. */
export function parseStateSyncTrust(raw: string): StateSyncTrust {
  const m = /^(\d{1,15}):(?:0x)?([0-9a-fA-F]{64})$/.exec(raw.trim());
  if (!m || Number(m[1]) < 1)
    throw new Error(`--state-sync-trust must be HEIGHT:HASH (a height >= 1 and a 32-byte block hash in hex), got ${raw}`);
  return { height: Number(m[1]), hash: m[2].toLowerCase() };
}

/** A snapshot and the peers offering it. */
export interface SnapshotCandidate {
  offer: SnapshotOffer;
  peers: string[];
}

/**
 * The snapshot to restore from the peers' offers: among those offered with the same height, id, block hash and
 * state root by at least `minPeers` peers, and that `verifiable` accepts (its block checks against what the node
 * trusts), the newest; null when there is none.
 */
export function chooseSnapshot(
  offersByPeer: ReadonlyMap<string, readonly SnapshotOffer[]>,
  verifiable: (offer: SnapshotOffer) => boolean,
  minPeers = MIN_SNAPSHOT_PEERS,
): SnapshotCandidate | null {
  const byKey = new Map<string, SnapshotCandidate>();
  for (const [peer, offers] of offersByPeer) {
    for (const o of offers) {
      const key = `${o.height}/${o.id}/${o.block_hash}/${o.state_root}/${o.chunks}`;
      const c = byKey.get(key) ?? { offer: o, peers: [] };
      if (!c.peers.includes(peer)) c.peers.push(peer);
      byKey.set(key, c);
    }
  }
  let best: SnapshotCandidate | null = null;
  for (const c of byKey.values()) {
    if (c.peers.length < minPeers || !verifiable(c.offer)) continue;
    if (
      best === null ||
      c.offer.height > best.offer.height ||
      (c.offer.height === best.offer.height && c.peers.length > best.peers.length)
    )
      best = c;
  }
  return best;
}

/**
 * `verifiable` under an operator's trust: the snapshot of the trusted block itself (headers carry no validator-set
 * hash to verify forward from it; without a trust the block is checked by snapshot-trust.ts instead).
 */
export const trustedBlockOnly =
  (trust: StateSyncTrust) =>
  (offer: SnapshotOffer): boolean =>
    offer.height === trust.height && offer.block_hash === trust.hash;
