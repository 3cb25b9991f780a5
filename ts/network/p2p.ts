import './polyfill.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { StrictNoSign, gossipsub } from '@libp2p/gossipsub';
import { identify } from '@libp2p/identify';
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { tcp } from '@libp2p/tcp';
import { lpStream } from '@libp2p/utils';
import { type Multiaddr, multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import {
  MAX_BLOCKS_PER_REQUEST,
  MAX_FRAME_BYTES,
  MAX_RANGE_BYTES,
  RANGE_TIMEOUT_MS,
  type RangeReply,
  type RangeSource,
  readRange,
  serveRange,
} from './block-range.js';
import { PeerMisbehaviour } from './errors.js';
import { gossipScoreParams, gossipScoreThresholds } from './gossip-score.js';
import { Gossip, type GossipTopics, type PubSub } from './gossip.js';
import type { GossipHandler, GossipTopic } from './gossip-validation.js';
import { PeerScores, ipOf } from './peer-score.js';

export { MAX_BLOCKS_PER_REQUEST, MAX_FRAME_BYTES, MAX_RANGE_BYTES, RangeInterrupted } from './block-range.js';
export { INVALID_MESSAGE_PENALTY, PeerMisbehaviour } from './errors.js';
export { type GossipVerdict, MAX_GOSSIP_BYTES, MAX_TXS_PER_GOSSIP } from './gossip-validation.js';
export { DEFAULT_PEER_SCORE } from './peer-score.js';
export { TX_BATCH_WINDOW_MS } from './gossip.js';

/** Consensus messages in one catch-up response at most (proposals and votes of one height). */
export const MAX_CONSENSUS_MESSAGES = 1000;
/** How long a refused peer of another chain stays connected so its identify of this node finishes. */
export const REFUSE_GRACE_MS = 2000;

export interface ChainStatus {
  chain_id: number;
  genesis_hash: string;
  head_height: number;
  head_hash: string;
}

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
      refused: (peer) => this.refused(peer),
      penalize: (peer, points, reason) => this.penalize(peer, points, reason),
    });
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

  private get statusProtocol(): string {
    return `${this.prefix}/status/1`;
  }
  private get blocksProtocol(): string {
    return `${this.prefix}/blocks/1`;
  }
  private get blockByHashProtocol(): string {
    return `${this.prefix}/block-by-hash/1`;
  }
  private get consensusSyncProtocol(): string {
    return `${this.prefix}/consensus-sync/1`;
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
    await this.node.handle(this.statusProtocol, (s, c) => void this.serveStatus(s, c));
    await this.node.handle(this.blocksProtocol, (s) => void serveRange(s, this.opts.blocks));
    await this.node.handle(this.blockByHashProtocol, (s) => void this.serveBlockByHash(s));
    await this.node.handle(this.consensusSyncProtocol, (s) => void this.serveConsensus(s));
    this.node.addEventListener('peer:identify', (e) => void this.onIdentify(e.detail.peerId, e.detail.protocols));
    this.node.addEventListener('peer:disconnect', (e) => this.heights.delete(e.detail.toString()));
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
      if (this.heights.has(id) || this.refused(id) || this.handshaking.has(id)) continue;
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
    if (!protocols.includes(this.statusProtocol)) {
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
      const target = this.peerById(peer);
      if (target) await this.node.hangUp(target).catch(() => undefined);
    }
  }

  // --- status ---

  private async serveStatus(stream: Stream, _c: Connection): Promise<void> {
    const lp = lpStream(stream, { maxDataLength: 4096 });
    try {
      await lp.read();
      await lp.write(Buffer.from(JSON.stringify(this.opts.status())));
      await stream.close();
    } catch {
      stream.abort(new Error('status failed'));
    }
  }

  async requestStatus(peer: PeerId | string): Promise<ChainStatus> {
    const target = typeof peer === 'string' ? this.peerById(peer) : peer;
    if (!target) throw new Error(`not connected to ${peer}`);
    const stream = await this.node.dialProtocol(target, this.statusProtocol, { signal: AbortSignal.timeout(5000) });
    const lp = lpStream(stream, { maxDataLength: 4096 });
    await lp.write(Buffer.from(JSON.stringify(this.opts.status())));
    const res = JSON.parse(Buffer.from((await lp.read()).subarray()).toString('utf8')) as ChainStatus;
    await stream.close().catch(() => undefined);
    if (typeof res.head_height !== 'number' || typeof res.genesis_hash !== 'string')
      throw new PeerMisbehaviour('malformed status');
    this.heights.set(target.toString(), res.head_height);
    return res;
  }

  // --- block ranges (block-range.ts) ---

  /**
   * Blocks [from, from + count) from a peer within maxBytes, each handed to onBlock as it arrives (the
   * peer may send fewer when it has fewer). Throws RangeInterrupted when the response ends early (the
   * blocks before were handed on), PeerMisbehaviour when it breaks the protocol.
   */
  async streamBlocks(
    peer: string,
    req: { from: number; count: number; maxBytes?: number },
    onBlock: (frame: Uint8Array) => void,
    signal?: AbortSignal,
  ): Promise<RangeReply> {
    const target = this.peerById(peer);
    if (!target) throw new Error(`not connected to ${peer}`);
    const timeout = AbortSignal.timeout(RANGE_TIMEOUT_MS);
    const stream = await this.node.dialProtocol(target, this.blocksProtocol, {
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const count = Math.min(req.count, MAX_BLOCKS_PER_REQUEST);
    return readRange(
      stream,
      { from: req.from, count, maxBytes: Math.min(req.maxBytes ?? MAX_RANGE_BYTES, MAX_RANGE_BYTES) },
      onBlock,
      signal,
    );
  }

  /** Encoded blocks [from, from + count) from a peer (it may send fewer when it has fewer). */
  async requestBlocks(peer: string, from: number, count: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    await this.streamBlocks(peer, { from, count }, (b) => out.push(b));
    return out;
  }

  // --- one block by hash (a proposal's block that did not fit in gossip) ---

  private async serveBlockByHash(stream: Stream): Promise<void> {
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES });
    try {
      const hash = (await lp.read()).subarray();
      if (hash.length !== 32) throw new Error('bad hash');
      await lp.write((await this.opts.blockByHash?.(Buffer.from(hash).toString('hex'))) ?? new Uint8Array(0));
      await stream.close();
    } catch {
      stream.abort(new Error('block-by-hash request failed'));
    }
  }

  /** An encoded block by hash from a peer, or null when it does not have it. */
  async requestBlockByHash(peer: string, hash: string): Promise<Uint8Array | null> {
    const target = this.peerById(peer);
    if (!target) return null;
    const stream = await this.node.dialProtocol(target, this.blockByHashProtocol, { signal: AbortSignal.timeout(10_000) });
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES });
    await lp.write(Buffer.from(hash, 'hex'));
    const frame = (await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray();
    await stream.close().catch(() => undefined);
    return frame.length ? frame : null;
  }

  // --- the consensus messages of a height (a validator that restarted or was cut off catches up) ---

  private async serveConsensus(stream: Stream): Promise<void> {
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES });
    try {
      const req = JSON.parse(Buffer.from((await lp.read()).subarray()).toString('utf8')) as { height: number };
      if (!Number.isSafeInteger(req.height) || req.height < 1) throw new Error('bad height');
      for (const m of (this.opts.consensusAt?.(req.height) ?? []).slice(0, MAX_CONSENSUS_MESSAGES)) await lp.write(m);
      await lp.write(new Uint8Array(0));
      await stream.close();
    } catch {
      stream.abort(new Error('consensus request failed'));
    }
  }

  /** A peer's consensus messages for a height (encoded as on the consensus topic). */
  async requestConsensus(peer: string, height: number): Promise<Uint8Array[]> {
    const target = this.peerById(peer);
    if (!target) return [];
    const stream = await this.node.dialProtocol(target, this.consensusSyncProtocol, { signal: AbortSignal.timeout(10_000) });
    const lp = lpStream(stream, { maxDataLength: MAX_FRAME_BYTES });
    await lp.write(Buffer.from(JSON.stringify({ height })));
    const out: Uint8Array[] = [];
    for (;;) {
      const frame = (await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray();
      if (frame.length === 0) break;
      out.push(frame);
      if (out.length > MAX_CONSENSUS_MESSAGES) throw new PeerMisbehaviour('too many consensus messages in a response');
    }
    await stream.close().catch(() => undefined);
    return out;
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
    return [...this.heights.keys()];
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
      if (!this.heights.has(id) || seen.has(id)) return [];
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

  notePeerHeight(peer: string, height: number): void {
    if (height > (this.heights.get(peer) ?? -1)) this.heights.set(peer, height);
  }
}

/** The peer id of a node key, for writing peer lists (testnet generator). */
export function peerIdOfNodeKey(nodeKey: Uint8Array): string {
  return peerIdFromPrivateKey(privateKeyFromRaw(nodeKey)).toString();
}
