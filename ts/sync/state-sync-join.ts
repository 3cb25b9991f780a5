/**
 * Joining by state sync (docs/p2p.md, "State sync", "Joining"): the snapshot to restore is chosen among the peers'
 * offers (snapshot-choice.ts), its block is fetched from a peer and must hash to the offer's block hash (and
 * the operator's trusted hash) and carry the manifest's state root; without a trusted hash it must be certified
 * by the validators the node trusts (snapshot-trust.ts). Its chunks are fetched and verified (snapshot-fetch.ts),
 * the restored state must finalize the block (its own validator set certified it), and it becomes the store's
 * head (chain/snapshot-head.ts). Before `writeSnapshotHead` the store has no head, so a crash at any point never
 * leaves a half state that opens.
 */
import { rmSync } from 'node:fs';
import { type Block, type ChainParams, decodeBlock, hasChainHead, writeSnapshotHead } from '../chain/index.js';
import type { SnapshotOffer, SnapshotPartRequest } from '../network/index.js';
import { RestoreRefusedError, SnapshotRestorer, decodeManifest, manifestId } from '../snapshot/index.js';
import type { KvStore } from '../storage/index.js';
import {
  BAD_CHUNK_PENALTY,
  type SnapshotFetchProgress,
  SnapshotPeersExhaustedError,
  fetchSnapshotChunks,
} from './snapshot-fetch.js';
import { type SnapshotCandidate, type StateSyncTrust, chooseSnapshot, trustedBlockOnly } from './snapshot-choice.js';
import { readSnapshotState } from './snapshot-probe.js';
import { trustHint, type TrustedSets, checkSnapshotBlock, finalityProblem, snapshotCertificates } from './snapshot-trust.js';

/**
 * How long a snapshot given up is not chosen again (its peers did not serve it): long enough for a newer one
 * to be taken on a short interval, short enough that a trusted one (`--state-sync-trust`) is tried again.
 */
export const GIVE_UP_MS = 30_000;

/** Rounds in a row in which no offering peer gave a snapshot's block and manifest before it is given up. */
export const PREPARE_TRIES = 3;

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
  /** Snapshots refused in this run, the latest last (at most REFUSED_SHOWN): why the node may still be waiting. */
  refused: RefusedSnapshot[];
}

/** A snapshot the join refused: forged, or its block not signed by enough validators the node trusts (`hint`). */
export interface RefusedSnapshot {
  height: number;
  block_hash: string;
  reason: string;
  hint?: string;
}

/** Refusals kept in the status. */
const REFUSED_SHOWN = 8;

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
    refused: [],
  };
}

export interface StateSyncOptions {
  db: KvStore;
  net: StateSyncNetwork;
  /** This chain's genesis block (kept at height 0: peers check it at the handshake). */
  genesis: Block;
  /** This chain's parameters (chain id, activation heights, genesis validators): the light-client checks read them. */
  params: ChainParams;
  /** The validator sets the node trusts without a trusted hash (snapshot-trust.ts, genesisTrustedSets). */
  trustedSets: TrustedSets;
  trust?: StateSyncTrust;
  /** Where the restored trie is saved as the snapshot block's checkpoint (the chain's start loads it). */
  checkpointPath?: string;
  /** Peers that must offer the same snapshot. */
  minPeers?: number;
  /** Between two rounds of asking the peers for snapshots. */
  retryMs?: number;
  onStatus?: (s: StateSyncStatus) => void;
  log?: (fields: Record<string, unknown>, msg: string) => void;
  /** Refused snapshots (forged, or beyond what the node can verify); `log` when absent. */
  warn?: (fields: Record<string, unknown>, msg: string) => void;
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
  const warn = o.warn ?? log;
  /**
   * Snapshots not chosen until a time (id -> ms), or for the rest of the run (refused: forged, or a block the node
   * cannot verify). Given up for GIVE_UP_MS: no offering peer gave a matching block and manifest, or every one left
   * the fetch (they pruned it, went away, sent bad chunks). The newest offer is chosen each round: without this,
   * two peers offering a snapshot they never serve would hold the join there for good.
   */
  const excludedUntil = new Map<string, number>();
  // (A refusal is never shortened.)
  const giveUp = (id: string) => excludedUntil.set(id, Math.max(excludedUntil.get(id) ?? 0, Date.now() + GIVE_UP_MS));
  // Back to discovering: the progress of the snapshot left behind is gone, the refusals stay.
  const resetProgress = () => Object.assign(status, initialStateSyncStatus(), { refused: status.refused });
  const refuse = (offer: SnapshotOffer, reason: string, forged: boolean): void => {
    excludedUntil.set(offer.id, Number.POSITIVE_INFINITY);
    const entry: RefusedSnapshot = {
      height: offer.height,
      block_hash: offer.block_hash,
      reason,
      ...(forged ? {} : { hint: trustHint(offer.height) }),
    };
    status.refused = [...status.refused, entry].slice(-REFUSED_SHOWN);
    publish();
    warn(
      { ...entry },
      forged ? 'state sync: forged snapshot refused' : 'state sync: snapshot refused: its block cannot be verified',
    );
  };
  // A snapshot whose state does not finalize its block: >1/3 of the trusted set signed a block of another history
  // (its state hashes to the block's root). Nothing of it stays; its offerers are scored down.
  const refuseForged = async (c: SnapshotCandidate, problem: string): Promise<void> => {
    if ((await SnapshotRestorer.inProgress(o.db)) !== null) await SnapshotRestorer.discard(o.db);
    if (o.checkpointPath !== undefined) rmSync(o.checkpointPath, { force: true });
    for (const peer of c.peers) void o.net.penalize(peer, BAD_CHUNK_PENALTY, `state sync: offered a forged snapshot: ${problem}`);
    resetProgress();
    refuse(c.offer, `the snapshot's state does not finalize its block: ${problem}`, true);
  };
  const trusted = o.trust ? trustedBlockOnly(o.trust) : () => true;
  // A block or manifest not got is a weaker sign (a busy peer, a liar answering first while honest ones time out):
  // the snapshot is given up after PREPARE_TRIES rounds in a row without them.
  const prepareFailures = new Map<string, number>();
  const preparedNothing = (id: string): void => {
    const n = (prepareFailures.get(id) ?? 0) + 1;
    if (n < PREPARE_TRIES) prepareFailures.set(id, n);
    else {
      prepareFailures.delete(id);
      giveUp(id);
    }
  };
  const verifiable = (x: SnapshotOffer): boolean => (excludedUntil.get(x.id) ?? 0) <= Date.now() && trusted(x);
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
      const got = await prepare(o, chosen.offer, chosen.peers, refuse);
      // Without a trusted hash the state's own validator set must finalize the block: checked on the chunk or two
      // that hold the set before the rest is fetched (a forged state costs that much), and on the whole state after.
      const early = got === null ? null : o.trust !== undefined ? { chunks: new Map() } : await probeFinality(o, chosen, got);
      if (typeof early === 'string') {
        await refuseForged(chosen, early);
        continue;
      }
      if (got === null || early === null) preparedNothing(chosen.offer.id);
      else {
        for (const [index, bytes] of early.chunks) await got.restorer.addChunk(index, bytes);
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
            resetProgress();
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
        const state = await got.restorer.finish(o.checkpointPath);
        const problem = finalityProblem(o.params, state, got.block, got.certificates);
        if (problem !== null && o.trust === undefined) {
          await refuseForged(chosen, problem);
          continue;
        }
        // With a trusted hash the state is the chain's (its root is the trusted block's): only the certificates
        // served with the block can be wrong, and they are outside its hash.
        if (problem !== null)
          warn({ height: got.block.index, problem }, 'state sync: the served certificates of the trusted block do not verify');
        await writeSnapshotHead(o.db, o.genesis, got.block);
        status.phase = 'done';
        publish();
        log({ height: got.block.index, hash: got.block.hash }, 'state sync: state restored');
        return got.block;
      }
    }
    if (asked++ % 10 === 0) {
      // Snapshots refused so far are the likely reason for waiting: the last one's hint is repeated.
      const last = status.refused.at(-1);
      (last === undefined ? log : warn)(
        { peers: o.net.connectedPeerIds().length, trust: o.trust ?? null, refused: status.refused.length, hint: last?.hint },
        'state sync: waiting for a snapshot offered by enough peers',
      );
    }
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
  refuse: (offer: SnapshotOffer, reason: string, forged: boolean) => void,
): Promise<{ restorer: SnapshotRestorer; block: Block; certificates: Uint8Array[] } | null> {
  const verified = await verifiedSnapshotBlock(o, offer, peers);
  if (typeof verified === 'string') {
    refuse(offer, verified, false);
    return null;
  }
  if (verified === null) return null;
  const { block, certificates } = verified;
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
      return { restorer: await SnapshotRestorer.open(o.db, manifest, block.state_root), block, certificates };
    } catch (err) {
      if (err instanceof RestoreRefusedError) throw err;
      void o.net.penalize(peer, BAD_CHUNK_PENALTY, `state sync: bad manifest: ${(err as Error).message}`);
    }
  }
  return null;
}

/**
 * The offer's block (with the next one when the peer has it: its last_commit certifies the block too), from the
 * first peer whose copy matches the offer and, without a trusted hash, is certified by the validators this node
 * trusts (checkSnapshotBlock). A peer serving a block that does not match or is forged is scored down. Null when
 * no peer answered well; the reason when the block is well formed but not signed by enough trusted validators.
 */
async function verifiedSnapshotBlock(
  o: StateSyncOptions,
  offer: SnapshotOffer,
  peers: readonly string[],
): Promise<{ block: Block; certificates: Uint8Array[] } | string | null> {
  let unproven: string | null = null;
  for (const peer of peers) {
    const raw = await o.net.requestBlocks(peer, offer.height, 2).catch(() => []);
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
    let next: Block | null = null;
    try {
      next = raw.length > 1 ? decodeBlock(raw[1]) : null;
    } catch {
      // The next block only adds a certificate; the snapshot block is checked on its own.
    }
    const certificates = snapshotCertificates(b, next);
    // The operator's hash vouches for the block (chooseSnapshot took only its snapshot).
    if (o.trust !== undefined) return { block: b, certificates };
    const verdict = checkSnapshotBlock(o.params, o.trustedSets(b.index), b, next);
    if (verdict.kind === 'forged') {
      void o.net.penalize(peer, BAD_CHUNK_PENALTY, `state sync: forged snapshot block ${b.index}: ${verdict.reason}`);
      continue;
    }
    if (verdict.kind === 'unproven') {
      unproven ??= `block ${b.index}: ${verdict.reason}`;
      continue;
    }
    o.log?.({ height: b.index, peer, detail: verdict.detail }, 'state sync: snapshot block verified');
    return { block: b, certificates };
  }
  return unproven;
}

/**
 * The finality rule on the snapshot's state, read from the chunks that hold its validator set (snapshot-probe.ts):
 * the chunks fetched when it holds (the restorer takes them), the problem when it does not, null when a chunk
 * could not be had (a peer serving a bad one is scored down).
 */
async function probeFinality(
  o: StateSyncOptions,
  c: SnapshotCandidate,
  got: { restorer: SnapshotRestorer; block: Block; certificates: Uint8Array[] },
): Promise<{ chunks: Map<number, Buffer> } | string | null> {
  const read = await readSnapshotState<string | null>(
    got.restorer.manifest,
    (state) => finalityProblem(o.params, state, got.block, got.certificates),
    async (index, state) => {
      for (const peer of c.peers) {
        const raw = await o.net.requestSnapshotPart(peer, { height: c.offer.height, id: c.offer.id, index }).catch(() => null);
        if (raw === null) continue;
        const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
        try {
          state.add(index, bytes);
          return bytes;
        } catch (err) {
          void o.net.penalize(peer, BAD_CHUNK_PENALTY, `state sync: ${(err as Error).message}`);
        }
      }
      return null;
    },
    // Only the state's content can make the read fail (its staking records, or more chunks than a set needs).
  ).catch((err: Error) => ({ value: `its validator set cannot be read: ${err.message}`, chunks: new Map<number, Buffer>() }));
  if (read === null) return null;
  if (read.value !== null) return read.value;
  o.log?.(
    { height: got.block.index, chunks: [...read.chunks.keys()] },
    "state sync: the snapshot's validator set finalizes its block",
  );
  return { chunks: read.chunks };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
