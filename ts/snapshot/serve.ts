/**
 * What `P/snapshots/1` and `P/snapshot-chunk/1` serve (ts/network): the complete snapshots of a directory, by
 * height and id, their manifests and chunks as stored. A part is served only for the id this node holds at that
 * height, so a requester never mixes chunks of two different manifests.
 */
import type { SnapshotOffer, SnapshotSource } from '../network/index.js';
import { decodeManifest, manifestId } from './format.js';
import type { SnapshotDirectory } from './store.js';

/** Snapshots offered at most (the protocol's bound). */
const MAX_OFFERS = 16;

export function snapshotSource(dir: SnapshotDirectory): SnapshotSource {
  /** Offers by height (a snapshot directory never changes once published; a pruned one is dropped). */
  const cache = new Map<number, SnapshotOffer>();
  const offerAt = async (height: number): Promise<SnapshotOffer | null> => {
    const hit = cache.get(height);
    if (hit) return hit;
    const bytes = await dir.manifestBytes(height);
    if (bytes === null) return null;
    const m = decodeManifest(bytes);
    const offer = { height, block_hash: m.block_hash, state_root: m.state_root, id: manifestId(m), chunks: m.chunks.length };
    cache.set(height, offer);
    return offer;
  };
  return {
    async offers() {
      const heights = dir.heights().slice(0, MAX_OFFERS);
      for (const h of cache.keys()) if (!heights.includes(h)) cache.delete(h);
      const out: SnapshotOffer[] = [];
      for (const h of heights) {
        const o = await offerAt(h).catch(() => null);
        if (o) out.push(o);
      }
      return out;
    },
    async part(height, id, index) {
      const offer = await offerAt(height).catch(() => null);
      if (offer?.id !== id) return null;
      return index === 'manifest' ? dir.manifestBytes(height) : dir.chunk(height, index);
    },
  };
}
