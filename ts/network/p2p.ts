import './polyfill.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { StrictNoSign, gossipsub } from '@libp2p/gossipsub';
import { identify } from '@libp2p/identify';
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { tcp } from '@libp2p/tcp';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { type RangeSource, serveRange } from './block-range.js';
import { serveBlockByHash } from './block-by-hash.js';
import { serveConsensusSync } from './consensus-sync.js';
import { serveSnapshotChunk } from './snapshot-chunk.js';
import { type SnapshotSource, serveSnapshots } from './snapshots.js';
import { gossipScoreParams, gossipScoreThresholds } from './gossip-score.js';
import { Gossip, type GossipTopics, type PubSub } from './gossip.js';
import type { GossipHandler, GossipTopic } from './gossip-validation.js';
import { PeerScores, ipOf } from './peer-score.js';
import { PeerRequests, type ProtocolName } from './requests.js';
import {
  BLOCK_BY_HASH_SERVING,
  CONSENSUS_SYNC_SERVING,
  RANGE_SERVING,
  SNAPSHOTS_SERVING,
  SNAPSHOT_CHUNK_SERVING,
  ServingBudget,
} from './serving-budget.js';
import { REQUEST_READ_TIMEOUT_MS, type ServingHost } from './serving.js';
import { type ChainStatus, answerStatus, exchangeStatus } from './status.js';

export { MAX_BLOCKS_PER_REQUEST, MAX_FRAME_BYTES, MAX_RANGE_BYTES, RangeInterrupted } from './block-range.js';
export { MAX_CONSENSUS_MESSAGES } from './consensus-sync.js';
export type { SnapshotOffer, SnapshotSource } from './snapshots.js';
export type { SnapshotPartRequest } from './snapshot-chunk.js';
export { INVALID_MESSAGE_PENALTY, IgnoredMessage, PeerMisbehaviour } from './errors.js';
export { type GossipVerdict, MAX_GOSSIP_BYTES, MAX_TXS_PER_GOSSIP } from './gossip-validation.js';
export { DEFAULT_PEER_SCORE } from './peer-score.js';
export { TX_BATCH_WINDOW_MS } from './gossip.js';
export { type ChainStatus, MAX_STATUS_BYTES } from './status.js';
/** How long a refused peer of another chain stays connected so its identify of this node finishes. */
export const REFUSE_GRACE_MS = 2000;

export interface PeerInfo {
  peer_id: string;
  address: string;
  direction: 'inbound' | 'outbound';
  height: number | null;
  score: number;
}

export interface P2POptions {
  /** 32-byte secp256k1 node key (the peer id). */
  nodeKey: Uint8Array;
  host: string;
  port: number;
  /** Static peers to keep connected (multiaddrs with /p2p/<peer id>). */
  peers: string[];
  chainId: number;
  genesisHash: string;
  status: () => ChainStatus;
  /** Blocks [from, from + count) encoded, within a byte bound (at least one), as far as this node has them. */
  blocks: RangeSource;
  /**
   * Gossip handlers (gossip-validation.ts): each resolves to its verdict ('accept' relays, 'ignore'
   * neither relays nor penalizes; nothing means accept) or throws PeerMisbehaviour (reject: penalized).
   */
  onTransaction: GossipHandler;
  onBlock: GossipHandler;
  /** Proposals and votes (BFT). */
  onConsensus?: GossipHandler;
  /** Double-sign evidence. */
  onEvidence?: GossipHandler;
  /** An encoded block by hash (a proposal's, or a committed one), for peers' block-by-hash requests. */
  blockByHash?: (hash: string) => Promise<Uint8Array | null>;
  /** The consensus messages (proposals, votes) this node holds for a height, for a peer catching up. */
  consensusAt?: (height: number) => Uint8Array[];
  /** The state snapshots this node serves (`P/snapshots/1`, `P/snapshot-chunk/1`); none offered without it. */
  snapshots?: SnapshotSource;
  onPeerStatus?: (peer: string, status: ChainStatus) => void;
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void; debug: (o: object, m: string) => void };
}

/**
 * The node's libp2p host (the stack Lodestar runs: TCP, Noise, Yamux, identify, gossipsub) and the
 * chain's protocols on it: a status handshake that refuses other chains and genesis blocks, gossip of
 * transactions and blocks, and block ranges by request/response. Protocol ids carry the chain id and
 * a genesis-hash prefix (docs/p2p.md).
 */
export class P2PNetwork {
  private node!: Libp2p;
  private readonly denied = new Set<string>();
  /** Penalties, bans (they expire) and per-IP offences: peer-score.ts. */
  readonly scores = new PeerScores();
  /** Peer ids of the static peers: never refused for their IP's offences (they share it with others). */
  private readonly staticPeers: Set<string>;
  private readonly heights = new Map<string, number>();
  private readonly handshaking = new Set<string>();
  /** Peers that completed the status handshake (either direction) on this chain: the only ones served. */
  private readonly handshaken = new Set<string>();
  /** Serving budgets per request/response protocol (ts/network/serving-budget.ts). */
  readonly budgets = {
    blocks: new ServingBudget(RANGE_SERVING),
    blockByHash: new ServingBudget(BLOCK_BY_HASH_SERVING),
    consensusSync: new ServingBudget(CONSENSUS_SYNC_SERVING),
    snapshots: new ServingBudget(SNAPSHOTS_SERVING),
    snapshotChunk: new ServingBudget(SNAPSHOT_CHUNK_SERVING),
  };
  /** The requesting side of the block-range, block-by-hash and consensus-sync protocols (requests.ts). */
  private readonly requests = new PeerRequests((peer) => {
    const target = this.peerById(peer);
    return target && ((name, signal) => this.node.dialProtocol(target, this.protocol(name), { signal }));
  });
  readonly streamBlocks = this.requests.streamBlocks.bind(this.requests);
  readonly requestBlocks = this.requests.requestBlocks.bind(this.requests);
  readonly requestBlockByHash = this.requests.requestBlockByHash.bind(this.requests);
  readonly requestConsensus = this.requests.requestConsensus.bind(this.requests);
  readonly requestSnapshots = this.requests.requestSnapshots.bind(this.requests);
  readonly requestSnapshotPart = this.requests.requestSnapshotPart.bind(this.requests);
  /** What the request handlers need of this host. */
  private readonly servingHost: ServingHost;
  private redial: NodeJS.Timeout | null = null;
  private readonly prefix: string;
  /** The gossip topics: publishing, batching and validation (gossip.ts). */
  private readonly gossip: Gossip;

  constructor(private readonly opts: P2POptions) {
    this.prefix = `/native/${opts.chainId}/${opts.genesisHash.slice(0, 16)}`;
    this.staticPeers = new Set(opts.peers.flatMap((a) => /\/p2p\/([^/]+)/.exec(a)?.[1] ?? []));
    this.gossip = new Gossip(this.prefix, {
      pubsub: () => this.pubsub(),
      handlers: {
        ...opts,
        head: () => {
          const s = opts.status();
          return { height: s.head_height, hash: s.head_hash };
        },
      },
      // Refused peers and peers that never completed the status handshake: not processed, not relayed.
      refused: (peer) => !this.isHandshaken(peer),
      penalize: (peer, points, reason) => this.penalize(peer, points, reason),
    });
    this.servingHost = {
      mayServe: (peer) => this.isHandshaken(peer),
      penalize: (peer, points, reason) => this.penalize(peer, points, reason),
      log: opts.log,
    };
  }

  /**
   * Whether a peer completed the status handshake on this chain and is not refused: request handlers
   * serve only these, and gossip from any other peer is not processed.
   */
  isHandshaken(peer: string): boolean {
    return this.handshaken.has(peer) && !this.refused(peer);
  }

  get topics(): GossipTopics {
    return this.gossip.topics;
  }

  /** Gossip messages received, and messages refused as invalid (metrics). */
  get counters(): { received: number; invalid: number } {
    return this.gossip.counters;
  }

  readonly publishTransaction = (bytes: Uint8Array): void => this.gossip.publishTransaction(bytes);
  readonly publishBlock = (bytes: Uint8Array): Promise<void> => this.gossip.publish('block', bytes);
  readonly publishConsensus = (bytes: Uint8Array): Promise<void> => this.gossip.publish('consensus', bytes);
  readonly publishEvidence = (bytes: Uint8Array): Promise<void> => this.gossip.publish('evidence', bytes);
  readonly subscribers = (topic: GossipTopic): string[] => this.gossip.subscribers(topic);
  /** Publish bytes on a topic as they are, unbatched and unchecked (tests: an adversarial peer). */
  readonly publishRaw = (topic: GossipTopic, bytes: Uint8Array): Promise<void> => this.gossip.publish(topic, bytes);

  /** A protocol's id: it carries the chain id and a genesis-hash prefix (docs/p2p.md). */
  private protocol(name: ProtocolName): string {
    return `${this.prefix}/${name}/1`;
  }

  get peerId(): string {
    return this.node.peerId.toString();
  }

  get listenAddrs(): string[] {
    return this.node.getMultiaddrs().map((a) => a.toString());
  }

  async start(): Promise<void> {
    const privateKey = privateKeyFromRaw(this.opts.nodeKey);
    const deny = async (peer: PeerId): Promise<boolean> => this.refused(peer.toString());
    const denyInbound = async (peer: PeerId, conn: { remoteAddr: Multiaddr }): Promise<boolean> =>
      this.refused(peer.toString(), ipOf(conn.remoteAddr));
    this.node = await createLibp2p({
      privateKey,
      addresses: { listen: [`/ip4/${this.opts.host}/tcp/${this.opts.port}`] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      connectionGater: {
        denyDialPeer: deny,
        denyInboundEncryptedConnection: denyInbound,
        denyOutboundEncryptedConnection: deny,
        // Tests and devnets run every node on loopback.
        denyDialMultiaddr: async () => false,
      },
      services: {
        identify: identify(),
        // Unsigned, content-addressed messages, forwarded only once this node accepted them (Lodestar's
        // setup): no per-message secp256k1 signature in JavaScript on every hop, and an invalid message
        // is never relayed, so the peer that delivered it (the propagation source) is the one to blame.
        pubsub: gossipsub({
          allowPublishToZeroTopicPeers: true,
          emitSelf: false,
          globalSignaturePolicy: StrictNoSign,
          asyncValidation: true,
          // Chosen, not defaulted (docs/p2p.md, "gossipsub score parameters"): the defaults' IP-colocation
          // penalty made a validator deaf to every peer of its IP after 12 harmless peers from it.
          scoreParams: gossipScoreParams(this.topics),
          scoreThresholds: gossipScoreThresholds,
        }),
      },
    });
    await this.node.handle(this.protocol('status'), (s, c) => void this.serveStatus(s, c));
    const host = this.servingHost;
    await this.node.handle(this.protocol('blocks'), (s, c) =>
      serveRange(host, s, c.remotePeer.toString(), this.opts.blocks, this.budgets.blocks),
    );
    await this.node.handle(this.protocol('block-by-hash'), (s, c) =>
      serveBlockByHash(host, s, c.remotePeer.toString(), this.budgets.blockByHash, async (hash) => {
        return (await this.opts.blockByHash?.(hash)) ?? null;
      }),
    );
    await this.node.handle(this.protocol('consensus-sync'), (s, c) =>
      serveConsensusSync(host, s, c.remotePeer.toString(), this.budgets.consensusSync, (h) => this.opts.consensusAt?.(h) ?? []),
    );
    await this.node.handle(this.protocol('snapshots'), (s, c) =>
      serveSnapshots(host, s, c.remotePeer.toString(), this.budgets.snapshots, this.opts.snapshots),
    );
    await this.node.handle(this.protocol('snapshot-chunk'), (s, c) =>
      serveSnapshotChunk(host, s, c.remotePeer.toString(), this.budgets.snapshotChunk, this.opts.snapshots),
    );
    this.node.addEventListener('peer:identify', (e) => void this.onIdentify(e.detail.peerId, e.detail.protocols));
    this.node.addEventListener('peer:disconnect', (e) => {
      this.heights.delete(e.detail.toString());
      this.handshaken.delete(e.detail.toString());
    });
    this.gossip.subscribe();
    this.dialStaticPeers();
    this.redial = setInterval(() => this.dialStaticPeers(), 2000);
    this.redial.unref();
    this.opts.log.info({ peer_id: this.peerId, listen: this.listenAddrs }, 'P2P listening');
  }

  async stop(): Promise<void> {
    if (this.redial) clearInterval(this.redial);
    this.gossip.stop();
    await this.node?.stop();
  }

  private pubsub(): PubSub {
    return (this.node.services as { pubsub: never }).pubsub;
  }

  /**
   * Keep the static peers connected (libp2p's own dialer backs off failing addresses), and retry the
   * status handshake of connected peers whose first one failed (a busy peer may miss its deadline).
   */
  private dialStaticPeers(): void {
    for (const p of this.node.getPeers()) {
      const id = p.toString();
      if (this.handshaken.has(id) || this.refused(id) || this.handshaking.has(id)) continue;
      this.handshaking.add(id);
      void this.handshake(p).finally(() => this.handshaking.delete(id));
    }
    const connected = new Set(this.node.getPeers().map((p) => p.toString()));
    for (const addr of this.opts.peers) {
      let ma: Multiaddr;
      try {
        ma = multiaddr(addr);
      } catch {
        continue;
      }
      const id = ma.getComponents().find((c) => c.name === 'p2p')?.value;
      if (id && (connected.has(id) || this.refused(id))) continue;
      this.node.dial(ma).catch((err: Error) => this.opts.log.debug({ addr, err: err.message }, 'dial failed'));
    }
  }

  private async onIdentify(peer: PeerId, protocols: string[]): Promise<void> {
    if (!protocols.includes(this.protocol('status'))) {
      await this.refuse(peer, 'peer does not speak this chain (chain id or genesis differ)');
      return;
    }
    await this.handshake(peer);
  }

  /** Exchange status; a peer of another chain or genesis is refused. */
  private async handshake(peer: PeerId): Promise<void> {
    const id = peer.toString();
    try {
      const status = await this.requestStatus(peer);
      if (status.chain_id !== this.opts.chainId || status.genesis_hash !== this.opts.genesisHash) {
        await this.refuse(peer, `peer is on chain ${status.chain_id} genesis ${status.genesis_hash.slice(0, 16)}`);
        return;
      }
      this.handshaken.add(id);
      this.heights.set(id, status.head_height);
      this.opts.onPeerStatus?.(id, status);
    } catch (err) {
      this.opts.log.debug({ peer: id, err: (err as Error).message }, 'status handshake failed');
    }
  }

  /**
   * Refuse a peer of another chain: denied at once (no gossip, requests or later connections), hung up
   * after a grace period in which its own identify of this node can finish, so it learns the chains
   * differ and refuses this node too instead of redialling a connection that closed without a reason.
   */
  private async refuse(peer: PeerId, reason: string): Promise<void> {
    if (this.denied.has(peer.toString())) return;
    this.denied.add(peer.toString());
    this.heights.delete(peer.toString());
    this.handshaken.delete(peer.toString());
    this.opts.log.warn({ peer: peer.toString(), reason }, 'peer refused at handshake');
    const t = setTimeout(() => void this.node.hangUp(peer).catch(() => undefined), REFUSE_GRACE_MS);
    t.unref();
  }

  /** Refused: another chain's peer, a banned one, or a new non-static peer from an IP refused for its offences. */
  private refused(peer: string, ip?: string): boolean {
    if (this.denied.has(peer) || this.scores.banned(peer)) return true;
    return ip !== undefined && !this.staticPeers.has(peer) && this.scores.ipBanned(ip);
  }

  /** The remote IP of a connected peer (its first connection), for per-IP accounting. */
  private ipOfPeer(peer: string): string | undefined {
    const c = this.node.getConnections().find((x) => x.remotePeer.toString() === peer);
    return c ? ipOf(c.remoteAddr) : undefined;
  }

  /**
   * Lower a peer's score for what it sent (peer-score.ts: penalties decay, bans expire, offences count
   * against the IP too); at the ban score it is disconnected and refused until the ban expires. Every
   * penalty is one structured log line ('peer penalized': peer, ip, points, reason, score), which the
   * devnet tests scan to check that no honest node ever penalizes another.
   */
  async penalize(peer: string, points: number, reason: string): Promise<void> {
    const ip = this.ipOfPeer(peer);
    const p = this.scores.penalize(peer, points, ip);
    const banned_until = p.bannedUntil === null ? undefined : new Date(p.bannedUntil).toISOString();
    this.opts.log.warn(
      { peer, ip, points, reason, score: Math.round(p.score * 10) / 10, ip_score: Math.round(p.ipScore), banned_until },
      'peer penalized',
    );
    if (this.scores.banned(peer)) {
      this.handshaken.delete(peer);
      this.heights.delete(peer);
      const target = this.peerById(peer);
      if (target) await this.node.hangUp(target).catch(() => undefined);
    }
  }

  // --- status ---

  /**
   * Answer a status request. The request carries the requester's own status: when it names this chain,
   * the requester completed the handshake from this side too (it is served from then on, with no race
   * against this node's own status request to it). Refused peers get nothing.
   */
  private async serveStatus(stream: Stream, c: Connection): Promise<void> {
    const peer = c.remotePeer.toString();
    if (this.refused(peer)) {
      stream.abort(new Error('refused'));
      return;
    }
    try {
      const theirs = await answerStatus(stream, this.opts.status);
      if (theirs.chain_id === this.opts.chainId && theirs.genesis_hash === this.opts.genesisHash && !this.refused(peer)) {
        this.handshaken.add(peer);
        this.notePeerHeight(peer, theirs.head_height);
      }
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error('status failed'));
    }
  }

  async requestStatus(peer: PeerId | string): Promise<ChainStatus> {
    const target = typeof peer === 'string' ? this.peerById(peer) : peer;
    if (!target) throw new Error(`not connected to ${peer}`);
    // One deadline for the whole exchange: a peer that opens the stream and never answers is not waited on.
    const signal = AbortSignal.timeout(REQUEST_READ_TIMEOUT_MS);
    const stream = await this.node.dialProtocol(target, this.protocol('status'), { signal });
    const res = await exchangeStatus(stream, this.opts.status(), signal);
    if (this.handshaken.has(target.toString())) this.heights.set(target.toString(), res.head_height);
    return res;
  }

  /**
   * Ask every handshaken peer for its status again (its head): block announcements go out once, and a
   * node that missed one would not learn that its peers moved on.
   */
  async refreshPeerStatus(): Promise<void> {
    await Promise.all(
      this.connectedPeerIds().map((id) =>
        this.requestStatus(id).catch((err: Error) =>
          this.opts.log.debug({ peer: id, err: err.message }, 'status refresh failed'),
        ),
      ),
    );
  }

  /** Peers that passed the handshake (ids). */
  connectedPeerIds(): string[] {
    return [...this.handshaken].filter((id) => !this.refused(id));
  }

  private peerById(id: string): PeerId | undefined {
    return this.node.getPeers().find((p) => p.toString() === id);
  }

  /** Connected peers that passed the handshake, with their last known head. */
  peers(): PeerInfo[] {
    const seen = new Set<string>();
    return this.node.getConnections().flatMap((c) => {
      const id = c.remotePeer.toString();
      // Two nodes that dialled each other at once hold two connections: one peer.
      if (!this.isHandshaken(id) || seen.has(id)) return [];
      seen.add(id);
      return [
        {
          peer_id: id,
          address: c.remoteAddr.toString(),
          direction: c.direction,
          height: this.heights.get(id) ?? null,
          score: Math.round(this.scores.score(id) * 10) / 10,
        },
      ];
    });
  }

  /** Heights peers reported (status handshakes and block announcements). */
  peerHeights(): Map<string, number> {
    return this.heights;
  }

  /** A head a handshaken peer claims (a hint: ts/sync/proven-heads.ts proves it before it counts). */
  notePeerHeight(peer: string, height: number): void {
    if (!this.isHandshaken(peer)) return;
    if (height > (this.heights.get(peer) ?? -1)) this.heights.set(peer, height);
  }
}

/** The peer id of a node key, for writing peer lists (testnet generator). */
export function peerIdOfNodeKey(nodeKey: Uint8Array): string {
  return peerIdFromPrivateKey(privateKeyFromRaw(nodeKey)).toString();
}
