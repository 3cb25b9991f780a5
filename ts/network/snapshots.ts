/**
 * `P/snapshots/1`: the state snapshots a peer offers for state sync (docs/p2p.md, "State sync"). Request `{}`;
 * response one JSON frame, a list (newest first, at most MAX_SNAPSHOT_OFFERS) of `{ height, block_hash,
 * state_root, id, chunks }`. The offers are claims: the joining node checks a manifest against a block it
 * trusts before it uses any of it.
 */
import type { Stream } from '@libp2p/interface';
import { PeerMisbehaviour } from './errors.js';
import type { ServingBudget } from './serving-budget.js';
import { RequestAbuse, type ServingHost, requestOneFrame, sendCountedFrame, serveRequest } from './serving.js';

/** One snapshot a peer offers (hashes and id: 64 hex, no 0x). */
export interface SnapshotOffer {
  height: number;
  block_hash: string;
  state_root: string;
  /** SHA-256 of the manifest's canonical bytes: peers offering the same snapshot offer the same id. */
  id: string;
  chunks: number;
}

/** What a node serves of its snapshots (ts/snapshot behind it; the network knows only bytes). */
export interface SnapshotSource {
  /** The snapshots this node holds, newest first. */
  offers(): Promise<SnapshotOffer[]>;
  /** The manifest's bytes (`index` "manifest") or a chunk's, of the snapshot at `height` with this id; null when not held. */
  part(height: number, id: string, index: number | 'manifest'): Promise<Uint8Array | null>;
}

/** Offers in one response at most. */
export const MAX_SNAPSHOT_OFFERS = 16;
/** The request is `{}`: anything longer is not this protocol. */
export const SNAPSHOTS_REQUEST_BYTES = 16;
/** The response frame at most (16 offers of ~250 bytes). */
export const SNAPSHOTS_RESPONSE_BYTES = 16 * 1024;
/** Deadline of the whole exchange. */
export const SNAPSHOTS_TIMEOUT_MS = 10_000;

const HASH_RE = /^[0-9a-f]{64}$/;
const isInt = (n: unknown, min: number): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min;

/** The request must be a JSON object (`{}`), or RequestAbuse. */
export function parseSnapshotsRequest(frame: Uint8Array): void {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(frame).toString('utf8'));
  } catch {
    throw new RequestAbuse('snapshots request is not JSON');
  }
  if (typeof req !== 'object' || req === null || Array.isArray(req)) throw new RequestAbuse('snapshots request is not {}');
}

/** A peer's offers, checked for shape (PeerMisbehaviour otherwise). */
export function parseSnapshotOffers(frame: Uint8Array): SnapshotOffer[] {
  let list: unknown;
  try {
    list = JSON.parse(Buffer.from(frame).toString('utf8'));
  } catch {
    throw new PeerMisbehaviour('snapshot offers are not JSON');
  }
  if (!Array.isArray(list) || list.length > MAX_SNAPSHOT_OFFERS)
    throw new PeerMisbehaviour(`snapshot offers are not a list of at most ${MAX_SNAPSHOT_OFFERS}`);
  return list.map((o: Record<string, unknown>) => {
    if (
      typeof o !== 'object' ||
      o === null ||
      !isInt(o.height, 1) ||
      !isInt(o.chunks, 0) ||
      ![o.block_hash, o.state_root, o.id].every((h) => typeof h === 'string' && HASH_RE.test(h))
    )
      throw new PeerMisbehaviour('a snapshot offer is not { height, block_hash, state_root, id, chunks }');
    return {
      height: o.height,
      block_hash: o.block_hash as string,
      state_root: o.state_root as string,
      id: o.id as string,
      chunks: o.chunks,
    };
  });
}

export async function serveSnapshots(
  host: ServingHost,
  stream: Stream,
  peer: string,
  budget: ServingBudget,
  source: SnapshotSource | undefined,
): Promise<void> {
  const spec = { name: 'snapshots', maxRequestBytes: SNAPSHOTS_REQUEST_BYTES, budget };
  await serveRequest(host, stream, peer, spec, async (request, slot) => {
    parseSnapshotsRequest(request);
    const offers = ((await source?.offers()) ?? []).slice(0, MAX_SNAPSHOT_OFFERS);
    await sendCountedFrame(stream, Buffer.from(JSON.stringify(offers)), slot);
  });
}

/** Ask an open stream for the peer's snapshot offers. */
export async function requestSnapshotsOnStream(stream: Stream, signal: AbortSignal): Promise<SnapshotOffer[]> {
  return parseSnapshotOffers(await requestOneFrame(stream, Buffer.from('{}'), SNAPSHOTS_RESPONSE_BYTES, signal));
}
