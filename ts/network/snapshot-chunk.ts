/**
 * `P/snapshot-chunk/1`: one part of a state snapshot a peer offers (docs/p2p.md, "State sync"). Request
 * `{"height":H,"id":"<64 hex>","index":N}` (chunk N) or `"index":"manifest"` (the manifest); response one frame,
 * the part's bytes as stored, or empty when the peer does not hold it. The receiver verifies the bytes
 * (ts/snapshot): a chunk that does not verify is the sender's fault.
 */
import type { Stream } from '@libp2p/interface';
import type { ServingBudget } from './serving-budget.js';
import { RequestAbuse, type ServingHost, requestOneFrame, sendCountedFrame, serveRequest } from './serving.js';
import type { SnapshotSource } from './snapshots.js';

/** The largest request: `{"height":9007199254740991,"id":"<64>","index":9007199254740991}` is ~120 bytes. */
export const SNAPSHOT_CHUNK_REQUEST_BYTES = 160;
/** The largest part: a manifest (16 MiB at most; chunks are at most 4 MiB). */
export const SNAPSHOT_PART_MAX_BYTES = 16 * 1024 * 1024;
/** Deadline of the whole exchange (16 MiB at a few MB/s). */
export const SNAPSHOT_CHUNK_TIMEOUT_MS = 30_000;

export interface SnapshotPartRequest {
  height: number;
  id: string;
  index: number | 'manifest';
}

const HASH_RE = /^[0-9a-f]{64}$/;

/** The request, strictly: integer height ≥ 1, a 64-hex id, an integer index ≥ 0 or "manifest"; else RequestAbuse. */
export function parseSnapshotPartRequest(frame: Uint8Array): SnapshotPartRequest {
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(frame).toString('utf8'));
  } catch {
    throw new RequestAbuse('snapshot-chunk request is not JSON');
  }
  const r = req as Record<string, unknown> | null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new RequestAbuse('snapshot-chunk request is not an object');
  const { height, id, index } = r;
  if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 1)
    throw new RequestAbuse('snapshot-chunk request: height must be an integer >= 1');
  if (typeof id !== 'string' || !HASH_RE.test(id)) throw new RequestAbuse('snapshot-chunk request: id must be 64 hex');
  if (index !== 'manifest' && (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0))
    throw new RequestAbuse('snapshot-chunk request: index must be an integer >= 0 or "manifest"');
  return { height, id, index };
}

export async function serveSnapshotChunk(
  host: ServingHost,
  stream: Stream,
  peer: string,
  budget: ServingBudget,
  source: SnapshotSource | undefined,
): Promise<void> {
  const spec = { name: 'snapshot-chunk', maxRequestBytes: SNAPSHOT_CHUNK_REQUEST_BYTES, budget };
  await serveRequest(host, stream, peer, spec, async (request, slot) => {
    const req = parseSnapshotPartRequest(request);
    const part = (await source?.part(req.height, req.id, req.index)) ?? new Uint8Array(0);
    if (part.length > SNAPSHOT_PART_MAX_BYTES) throw new Error(`snapshot part of ${part.length} bytes is over the frame bound`);
    await sendCountedFrame(stream, part, slot);
  });
}

/** Ask an open stream for a snapshot part: its bytes, or null when the peer does not hold it. */
export async function requestSnapshotPartOnStream(
  stream: Stream,
  req: SnapshotPartRequest,
  signal: AbortSignal,
): Promise<Uint8Array | null> {
  const request = Buffer.from(JSON.stringify({ height: req.height, id: req.id, index: req.index }));
  const frame = await requestOneFrame(stream, request, SNAPSHOT_PART_MAX_BYTES, signal);
  return frame.length ? frame : null;
}
