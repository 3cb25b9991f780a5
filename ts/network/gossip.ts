/**
 * The node's gossip topics on gossipsub: names, publishing (transactions in batches), and every received
 * message judged before it is relayed (gossip-validation.ts): ACCEPT relays it, IGNORE drops it quietly,
 * REJECT drops it and penalizes the peer that delivered it.
 */
import { RLP } from '@ethereumjs/rlp';
import { type GossipsubMessage, TopicValidatorResult } from '@libp2p/gossipsub';
import {
  type GossipHandlers,
  type GossipTopic,
  MAX_GOSSIP_BYTES,
  MAX_TXS_PER_GOSSIP,
  validateGossip,
} from './gossip-validation.js';

/** How long the first transaction of a gossip batch waits for company. */
export const TX_BATCH_WINDOW_MS = 50;

export interface GossipTopics {
  tx: string;
  block: string;
  consensus: string;
  evidence: string;
}

/** What of gossipsub this uses. */
export interface PubSub {
  subscribe(t: string): void;
  publish(t: string, d: Uint8Array): Promise<unknown>;
  addEventListener(ev: 'gossipsub:message', cb: (e: CustomEvent<GossipsubMessage>) => void): void;
  reportMessageValidationResult(msgId: string, propagationSource: string, acceptance: TopicValidatorResult): void;
  getSubscribers(topic: string): { toString(): string }[];
}

export interface GossipDeps {
  pubsub: () => PubSub;
  handlers: GossipHandlers;
  /** Peers whose messages are not even looked at (banned, another chain's). */
  refused: (peer: string) => boolean;
  penalize: (peer: string, points: number, reason: string) => Promise<void>;
}

export class Gossip {
  readonly topics: GossipTopics;
  /** Gossip messages received, and messages refused as invalid (metrics). */
  readonly counters = { received: 0, invalid: 0 };
  private txBatch: Uint8Array[] = [];
  private txBatchBytes = 0;
  private txFlush: NodeJS.Timeout | null = null;

  constructor(
    prefix: string,
    private readonly deps: GossipDeps,
  ) {
    this.topics = {
      tx: `${prefix}/txs/1`,
      block: `${prefix}/block/1`,
      consensus: `${prefix}/consensus/1`,
      evidence: `${prefix}/evidence/1`,
    };
  }

  subscribe(): void {
    const pubsub = this.deps.pubsub();
    for (const t of Object.values(this.topics)) pubsub.subscribe(t);
    pubsub.addEventListener('gossipsub:message', (e) => void this.onMessage(e.detail));
  }

  /** Peers known to subscribe to a topic (what a publish reaches). */
  subscribers(kind: GossipTopic): string[] {
    return this.deps
      .pubsub()
      .getSubscribers(this.topics[kind])
      .map((p) => p.toString());
  }

  stop(): void {
    this.flushTransactions();
  }

  /**
   * A gossip message, from the peer that delivered it (messages are unsigned; an honest peer forwards
   * only what it accepted, so an invalid message costs the peer that sent it, and only that peer).
   */
  private async onMessage(m: GossipsubMessage): Promise<void> {
    const from = m.propagationSource.toString();
    const { topic, data } = m.msg;
    const report = (r: TopicValidatorResult) => this.deps.pubsub().reportMessageValidationResult(m.msgId, from, r);
    this.counters.received++;
    const kind = this.topicOf(topic);
    if (this.deps.refused(from) || !kind) return report(TopicValidatorResult.Ignore);
    const outcome = await validateGossip(kind, data, from, this.deps.handlers);
    if (!('reason' in outcome))
      return report(outcome.verdict === 'accept' ? TopicValidatorResult.Accept : TopicValidatorResult.Ignore);
    this.counters.invalid++;
    report(TopicValidatorResult.Reject);
    await this.deps.penalize(from, outcome.penalty, outcome.reason);
  }

  private topicOf(topic: string): GossipTopic | null {
    for (const [kind, name] of Object.entries(this.topics)) if (name === topic) return kind as GossipTopic;
    return null;
  }

  /**
   * Publish bytes on a topic as they are (a transaction batch must be one already). A block too large for
   * gossip is left to range requests: peers see the gap.
   */
  async publish(kind: GossipTopic, bytes: Uint8Array): Promise<void> {
    if (kind === 'block' && bytes.length > MAX_GOSSIP_BYTES) return;
    await this.deps
      .pubsub()
      .publish(this.topics[kind], bytes)
      .catch(() => undefined);
  }

  /**
   * Gossip a transaction. Transactions travel in batches (RLP list of typed encodings): the first waits
   * TX_BATCH_WINDOW_MS for others, so a busy node sends tens of messages a second instead of thousands.
   */
  publishTransaction(bytes: Uint8Array): void {
    if (this.txBatchBytes + bytes.length > MAX_GOSSIP_BYTES - 1024) this.flushTransactions();
    this.txBatch.push(bytes);
    this.txBatchBytes += bytes.length;
    if (this.txBatch.length >= MAX_TXS_PER_GOSSIP) this.flushTransactions();
    else this.txFlush ??= setTimeout(() => this.flushTransactions(), TX_BATCH_WINDOW_MS);
  }

  private flushTransactions(): void {
    if (this.txFlush) clearTimeout(this.txFlush);
    this.txFlush = null;
    if (this.txBatch.length === 0) return;
    const batch = RLP.encode(this.txBatch);
    this.txBatch = [];
    this.txBatchBytes = 0;
    void this.deps
      .pubsub()
      .publish(this.topics.tx, batch)
      .catch(() => undefined);
  }
}
