/**
 * Joining by state sync (docs/p2p.md, "State sync", "Joining"): the snapshot to restore is chosen among the peers'
 * offers (snapshot-choice.ts), its block is fetched from a peer and must hash to the offer's block hash (and
 * the operator's trusted hash) and carry the manifest's state root, its chunks are fetched and verified
 * (snapshot-fetch.ts), and the restored state becomes the store's head (chain/snapshot-head.ts). Before
 * `writeSnapshotHead` the store has no head, so a crash at any point never leaves a half state that opens.
 */
import { type Block, decodeBlock, hasChainHead, writeSnapshotHead } from '../chain/index.js';
import type { SnapshotOffer, SnapshotPartRequest } from '../network/index.js';
import { RestoreRefusedError, SnapshotRestorer, decodeManifest, manifestId } from '../snapshot/index.js';
import type { KvStore } from '../storage/index.js';
import {
  BAD_CHUNK_PENALTY,
  type SnapshotFetchProgress,
  SnapshotPeersExhaustedError,
  fetchSnapshotChunks,
} from './snapshot-fetch.js';
import { type StateSyncTrust, chooseSnapshot, trustedBlockOnly } from './snapshot-choice.js';

/**
 * How long a snapshot given up is not chosen again (its peers did not serve it): long enough for a newer one
 * to be taken on a short interval, short enough that a trusted one (`--state-sync-trust`) is tried again.
 */
export const GIVE_UP_MS = 30_000;

/** What joining needs of the network (P2PNetwork has it). */
export interface StateSyncNetwork {
  connectedPeerIds(): string[];
  requestSnapshots(peer: string): Promise<SnapshotOffer[]>;
  requestSnapshotPart(peer: string, req: SnapshotPartRequest): Promise<Uint8Array | null>;
  requestBlocks(peer: string, from: number, count: number): Promise<Uint8Array[]>;
  penalize(peer: string, points: number, reason: string): unknown;
}

/** Where joining stands: `/native_status.sync_info.state_sync` while it runs. */
export interface StateSyncStatus {
  phase: 'discovering' | 'fetching' | 'finishing' | 'done';
  snapshot_height: number | null;
  chunks_done: number;
  chunks_total: number;
  bytes: number;
  mb_per_sec: number;
  eta_seconds: number | null;
}

/** Before any snapshot is chosen. */
export function initialStateSyncStatus(): StateSyncStatus {
  return {
    phase: 'discovering',
    snapshot_height: null,
    chunks_done: 0,
    chunks_total: 0,
    bytes: 0,
    mb_per_sec: 0,
    eta_seconds: null,
  };
}

export interface StateSyncOptions {
  db: KvStore;
  net: StateSyncNetwork;
  /** This chain's genesis block (kept at height 0: peers check it at the handshake). */
  genesis: Block;
  trust?: StateSyncTrust;
  /** Where the restored trie is saved as the snapshot block's checkpoint (the chain's start loads it). */
  checkpointPath?: string;
  /** Peers that must offer the same snapshot. */
  minPeers?: number;
  /** Between two rounds of asking the peers for snapshots. */
  retryMs?: number;
  onStatus?: (s: StateSyncStatus) => void;
  log?: (fields: Record<string, unknown>, msg: string) => void;
  signal?: AbortSignal;
}

/** Restore the state of a snapshot the peers offer and make its block the store's head; returns that block. */
export async function joinByStateSync(o: StateSyncOptions): Promise<Block> {
  const log = o.log ?? (() => undefined);
  if (await hasChainHead(o.db))
    throw new RestoreRefusedError('the database already holds a chain: state sync needs a fresh data directory');
  const status = initialStateSyncStatus();
  const publish = () => o.onStatus?.({ ...status });
  publish();
  const trusted = o.trust ? trustedBlockOnly(o.trust) : () => true;
  // Snapshots given up a while ago (id -> until when): no offering peer gave a matching block and manifest, or
  // every one left the fetch (they pruned it, went away, sent bad chunks). The newest offer is chosen each
  // round: without this, two peers offering a snapshot they never serve would hold the join there for good.
  const givenUp = new Map<string, number>();
  const giveUp = (id: string) => givenUp.set(id, Date.now() + GIVE_UP_MS);
  const verifiable = (offer: SnapshotOffer): boolean => (givenUp.get(offer.id) ?? 0) <= Date.now() && trusted(offer);
  let asked = 0;
  for (;;) {
    o.signal?.throwIfAborted();
    const offers = new Map<string, SnapshotOffer[]>();
    await Promise.all(
      o.net.connectedPeerIds().map(async (p) => {
        const list = await o.net.requestSnapshots(p).catch(() => null);
        if (list) offers.set(p, list);
      }),
    );
    // A restore left by an earlier run resumes while its snapshot is still offered.
    const resuming = await SnapshotRestorer.inProgress(o.db);
    const chosen =
      (resuming !== null && chooseSnapshot(offers, (x) => x.id === resuming && verifiable(x), o.minPeers)) ||
      chooseSnapshot(offers, verifiable, o.minPeers);
    if (chosen) {
      const got = await prepare(o, chosen.offer, chosen.peers);
      if (got === null) giveUp(chosen.offer.id);
      else {
        status.phase = 'fetching';
        status.snapshot_height = chosen.offer.height;
        status.chunks_total = got.restorer.manifest.chunks.length;
        status.chunks_done = got.restorer.chunksDone;
        publish();
        log(
          { height: chosen.offer.height, peers: chosen.peers.length, chunks: status.chunks_total, resumed: status.chunks_done },
          'state sync: snapshot chosen',
        );
        const fetched = await fetchSnapshotChunks({
          restorer: got.restorer,
          peers: chosen.peers,
          fetch: (peer, index) => o.net.requestSnapshotPart(peer, { height: chosen.offer.height, id: chosen.offer.id, index }),
          penalize: (peer, points, reason) => void o.net.penalize(peer, points, reason),
          onProgress: (p: SnapshotFetchProgress) => {
            Object.assign(status, { chunks_done: p.done, bytes: p.bytes, mb_per_sec: p.mbPerSec, eta_seconds: p.etaSec });
            publish();
            log(
              {
                done: p.done,
                total: p.total,
                mb_per_sec: round2(p.mbPerSec),
                eta_s: p.etaSec === null ? null : round2(p.etaSec),
              },
              'state sync: chunks',
            );
          },
          signal: o.signal,
        }).then(
          () => true,
          (err: Error) => {
            if (!(err instanceof SnapshotPeersExhaustedError)) throw err;
            // The chunks written stay: the restore resumes if this snapshot is chosen again, and is discarded
            // when another one is.
            giveUp(chosen.offer.id);
            Object.assign(status, initialStateSyncStatus());
            publish();
            log(
              { height: chosen.offer.height, missing: err.missing.length },
              'state sync: no peer left for the snapshot; choosing another',
            );
            return false;
          },
        );
        if (!fetched) continue;
        status.phase = 'finishing';
        publish();
        await got.restorer.finish(o.checkpointPath);
        await writeSnapshotHead(o.db, o.genesis, got.block);
        status.phase = 'done';
        publish();
        log({ height: got.block.index, hash: got.block.hash }, 'state sync: state restored');
        return got.block;
      }
    }
    if (asked++ % 10 === 0)
      log(
        { peers: o.net.connectedPeerIds().length, trust: o.trust ?? null },
        'state sync: waiting for a snapshot offered by enough peers',
      );
    await new Promise((r) => setTimeout(r, o.retryMs ?? 1000));
  }
}

/**
 * The offer's manifest and block from its peers, checked against each other and the offer (a peer whose
 * answer does not match is scored down), and the restorer opened on them; null when no peer answered well.
 */
async function prepare(
  o: StateSyncOptions,
  offer: SnapshotOffer,
  peers: readonly string[],
): Promise<{ restorer: SnapshotRestorer; block: Block } | null> {
  let block: Block | null = null;
  for (const peer of peers) {
    const raw = await o.net.requestBlocks(peer, offer.height, 1).catch(() => []);
    if (raw.length === 0) continue;
    let b: Block;
    try {
      b = decodeBlock(raw[0]);
    } catch {
      void o.net.penalize(peer, BAD_CHUNK_PENALTY, 'state sync: undecodable snapshot block');
      continue;
    }
    if (b.index !== offer.height || b.hash !== offer.block_hash || b.state_root !== offer.state_root) {
      void o.net.penalize(peer, BAD_CHUNK_PENALTY, 'state sync: the snapshot block does not match its offer');
      continue;
    }
    block = b;
    break;
  }
  if (block === null) return null;
  // The offer is checked against what the node trusts (chooseSnapshot), the block against the offer: the
  // manifest must now hash to the offer's id and recompute the block's state root (SnapshotRestorer.open).
  for (const peer of peers) {
    const raw = await o.net
      .requestSnapshotPart(peer, { height: offer.height, id: offer.id, index: 'manifest' })
      .catch(() => null);
    if (raw === null) continue;
    try {
      const manifest = decodeManifest(raw);
      if (manifestId(manifest) !== offer.id || manifest.block_hash !== block.hash)
        throw new Error('manifest does not match its offer');
      const inProgress = await SnapshotRestorer.inProgress(o.db);
      if (inProgress !== null && inProgress !== offer.id) {
        o.log?.(
          { discarded: inProgress, height: offer.height },
          'state sync: the unfinished restore is no longer offered; starting over',
        );
        await SnapshotRestorer.discard(o.db);
      }
      return { restorer: await SnapshotRestorer.open(o.db, manifest, block.state_root), block };
    } catch (err) {
      if (err instanceof RestoreRefusedError) throw err;
      void o.net.penalize(peer, BAD_CHUNK_PENALTY, `state sync: bad manifest: ${(err as Error).message}`);
    }
  }
  return null;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
