import { Counter, Histogram, type Registry } from 'prom-client';
import { liveGauge } from './node-metrics.js';

/** What the network gauges read at scrape time. */
export interface NetworkMetricsSources {
  peers(): number;
  /** Current BFT (height, round); null when this node runs no BFT engine. */
  bft(): { height: number; round: number } | null;
  /** Head minus finalized height (0 while every committed block is final). */
  finalityLagBlocks(): number;
  /** Seconds since the newest final block was committed here. */
  lastFinalizedAgeSeconds(): number;
  /** Highest head a peer reported, and this node's head. */
  syncTarget(): number;
  height(): number;
  catchingUp(): boolean;
  blocksImported(): number;
  gossip(): { received: number; invalid: number };
}

const FINALITY_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.1, 1.5, 2, 3, 5, 10];

/** Peers, BFT rounds, finality lag and sync progress as Prometheus series (registered once per node). */
export class NetworkMetrics {
  private readonly roundChanges: Counter;
  private readonly finality: Histogram;
  private readonly evidence: Counter;

  constructor(registry: Registry, s: NetworkMetricsSources) {
    const registers = [registry];
    const live = (name: string, help: string, read: () => number) => liveGauge(registry, name, help, read);
    live('native_p2p_peers', 'Connected peers that passed the chain handshake', s.peers);
    live('native_bft_height', 'Height the BFT engine is deciding (0 without an engine)', () => s.bft()?.height ?? 0);
    live('native_bft_round', 'Round of the height being decided (0 = first round)', () => s.bft()?.round ?? 0);
    live('native_finality_lag_blocks', 'Head height minus finalized height', s.finalityLagBlocks);
    live(
      'native_last_finalized_age_seconds',
      'Seconds since the newest final block was committed on this node',
      s.lastFinalizedAgeSeconds,
    );
    live('native_sync_target_height', "Highest head reported by a peer (this node's head when none is ahead)", s.syncTarget);
    live('native_sync_blocks_behind', "Blocks between this node's head and the highest peer head", () =>
      Math.max(0, s.syncTarget() - s.height()),
    );
    live('native_sync_catching_up', '1 while a peer is known to be ahead of this node', () => (s.catchingUp() ? 1 : 0));
    new Counter({
      name: 'native_sync_blocks_imported_total',
      help: 'Blocks imported from peers (gossip and range requests)',
      registers,
      collect() {
        this.reset();
        this.inc(s.blocksImported());
      },
    });
    new Counter({
      name: 'native_p2p_gossip_messages_total',
      help: 'Gossip messages received',
      registers,
      collect() {
        this.reset();
        this.inc(s.gossip().received);
      },
    });
    new Counter({
      name: 'native_p2p_invalid_messages_total',
      help: 'Gossip messages refused as malformed, oversized or invalid (their senders are scored down)',
      registers,
      collect() {
        this.reset();
        this.inc(s.gossip().invalid);
      },
    });
    this.roundChanges = new Counter({
      name: 'native_bft_round_changes_total',
      help: 'Rounds started beyond round 0 (a proposer was down or a round timed out)',
      registers,
    });
    this.finality = new Histogram({
      name: 'native_bft_proposal_to_finality_seconds',
      help: 'From a proposal reaching this node (or being made here) to its block committed final here',
      buckets: FINALITY_BUCKETS,
      registers,
    });
    this.evidence = new Counter({
      name: 'native_bft_evidence_total',
      help: 'Double-sign evidence items this node saw first-hand or by gossip',
      registers,
    });
  }

  roundStarted(round: number): void {
    if (round > 0) this.roundChanges.inc();
  }

  finalized(proposalToFinalityMs: number | null): void {
    if (proposalToFinalityMs !== null) this.finality.observe(proposalToFinalityMs / 1000);
  }

  evidenceSeen(): void {
    this.evidence.inc();
  }
}
