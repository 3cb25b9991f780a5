/**
 * The node's own peer score (docs/p2p.md, "Peer score"): penalties for what a peer sent, decaying with
 * time; a ban when the score reaches BAN_SCORE, which expires; and the same accounting per remote IP, so
 * a sender that returns with a fresh peer id (a free key) is not forgiven: its IP's offences lengthen the
 * ban and, past a threshold, refuse new connections from that IP (static peers exempt). The clock is
 * injected so tests can move time.
 */

import type { Multiaddr } from '@multiformats/multiaddr';

/** The IP of a peer's address (/ip4/… or /ip6/…), the key of per-IP accounting. */
export function ipOf(addr: Multiaddr): string | undefined {
  return addr.getComponents().find((x) => x.name === 'ip4' || x.name === 'ip6')?.value;
}

export interface PeerScoreConfig {
  /** A peer whose score falls to this is disconnected and refused until its ban expires. */
  banScore: number;
  /** Penalties halve every this many ms (an old offence weighs less). */
  halfLifeMs: number;
  /** The first ban of a peer; each later ban of the peer or of its IP doubles it, up to maxBanMs. */
  banMs: number;
  maxBanMs: number;
  /** An IP whose summed (decaying) penalties reach this refuses new non-static peers while it stays there. */
  ipBanScore: number;
}

export const DEFAULT_PEER_SCORE: PeerScoreConfig = {
  banScore: -50,
  halfLifeMs: 10 * 60_000,
  banMs: 10 * 60_000,
  maxBanMs: 24 * 3600_000,
  // Ten invalid messages' worth: one misbehaving process tried ten keys. Hosts behind one NAT share it.
  ipBanScore: -500,
};

interface Decaying {
  score: number;
  at: number;
}

export interface Penalty {
  /** The peer's score after this penalty (decayed). */
  score: number;
  /** The IP's summed score after it (0 when the IP is unknown). */
  ipScore: number;
  /** Set when this penalty banned the peer: until when (ms since the epoch). */
  bannedUntil: number | null;
}

/** Entries kept at most (scores that decayed to nothing and expired bans are dropped first). */
const MAX_ENTRIES = 10_000;

export class PeerScores {
  private readonly peers = new Map<string, Decaying>();
  private readonly ips = new Map<string, Decaying>();
  private readonly bans = new Map<string, number>();
  /** Bans so far per peer and per IP (a repeat offender's ban doubles). */
  private readonly banCounts = new Map<string, number>();

  constructor(
    readonly config: PeerScoreConfig = DEFAULT_PEER_SCORE,
    private readonly now: () => number = Date.now,
  ) {}

  private decayed(d: Decaying | undefined): number {
    if (!d) return 0;
    return d.score * 0.5 ** ((this.now() - d.at) / this.config.halfLifeMs);
  }

  private add(map: Map<string, Decaying>, key: string, points: number): number {
    const score = this.decayed(map.get(key)) - points;
    map.set(key, { score, at: this.now() });
    return score;
  }

  /** Lower a peer's score (and its IP's) by `points`; bans it when it reaches the ban score. */
  penalize(peer: string, points: number, ip?: string): Penalty {
    if (this.peers.size + this.ips.size > MAX_ENTRIES) this.prune();
    const score = this.add(this.peers, peer, points);
    const ipScore = ip ? this.add(this.ips, ip, points) : 0;
    let bannedUntil: number | null = null;
    if (score <= this.config.banScore && !this.banned(peer)) {
      const repeats = Math.max(this.banCounts.get(peer) ?? 0, ip ? (this.banCounts.get(`ip:${ip}`) ?? 0) : 0);
      bannedUntil = this.now() + Math.min(this.config.maxBanMs, this.config.banMs * 2 ** repeats);
      this.bans.set(peer, bannedUntil);
      this.banCounts.set(peer, (this.banCounts.get(peer) ?? 0) + 1);
      if (ip) this.banCounts.set(`ip:${ip}`, (this.banCounts.get(`ip:${ip}`) ?? 0) + 1);
    }
    return { score, ipScore, bannedUntil };
  }

  score(peer: string): number {
    return this.decayed(this.peers.get(peer));
  }

  ipScore(ip: string): number {
    return this.decayed(this.ips.get(ip));
  }

  /** Whether the peer is banned now (bans expire). */
  banned(peer: string): boolean {
    const until = this.bans.get(peer);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.bans.delete(peer);
    return false;
  }

  /** Whether new peers from this IP are refused now (static peers are exempt: the caller decides). */
  ipBanned(ip: string): boolean {
    return this.ipScore(ip) <= this.config.ipBanScore;
  }

  /** Drop what no longer matters: scores decayed to almost nothing, expired bans. */
  private prune(): void {
    for (const map of [this.peers, this.ips])
      for (const [k, d] of map) if (Math.abs(this.decayed(d)) < 1 && !this.bans.has(k)) map.delete(k);
    for (const peer of [...this.bans.keys()]) this.banned(peer);
  }
}
