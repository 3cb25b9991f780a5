/**
 * What a gossip message is worth relaying (docs/p2p.md, "Gossip validation", the per-topic REJECT /
 * IGNORE table). gossipsub forwards a message only once this node reports ACCEPT; REJECT penalizes the
 * peer that delivered it (the propagation source: an honest peer relays only what it accepted, so what it
 * delivers is its own doing); IGNORE neither relays nor penalizes: the message is old, already known, or
 * cannot be checked yet. Every RLP payload is walked by the bounded decoder (no copy per level, a depth
 * limit) before anything else reads it.
 */
import { createHash } from 'node:crypto';
import { RlpDecodeError, checkRlp, decodeRlp } from '../util/index.js';
import { IgnoredMessage, PeerMisbehaviour } from './errors.js';

/** Gossip messages stay far below gossipsub's silent ~4 MiB drop; larger blocks go by request/response. */
export const MAX_GOSSIP_BYTES = 1024 * 1024;
/** Transactions gossiped in one message at most. */
export const MAX_TXS_PER_GOSSIP = 256;
/** A block's deepest list: [header, sig, justification, [txs], [last_commit, [evidence...]]]. */
const BLOCK_RLP_DEPTH = 3;

/** ACCEPT: relay. IGNORE: do not relay, do not penalize. A handler REJECTs by throwing PeerMisbehaviour. */
export type GossipVerdict = 'accept' | 'ignore';

export type GossipOutcome = { verdict: GossipVerdict } | { verdict: 'reject'; reason: string; penalty: number };

export type GossipTopic = 'tx' | 'block' | 'consensus' | 'evidence';

/** Handlers resolve to a verdict (nothing: accept, for handlers that have none to give) or throw PeerMisbehaviour. */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers without a verdict (the block sync's) return Promise<void>
export type GossipHandler = (bytes: Uint8Array, from: string) => Promise<GossipVerdict | undefined | void>;

export interface GossipHandlers {
  onTransaction: GossipHandler;
  onBlock: GossipHandler;
  onConsensus?: GossipHandler;
  onEvidence?: GossipHandler;
  /** This node's head: a block is relayed only once it is imported here (the head is then that block). */
  head: () => { height: number; hash: string };
  log: { warn: (o: object, m: string) => void };
}

const reject = (reason: string, penalty?: number): GossipOutcome => ({
  verdict: 'reject',
  reason,
  penalty: penalty ?? new PeerMisbehaviour('').penalty,
});

/** The verdict on one gossip message of a topic, from the peer that delivered it. */
export async function validateGossip(
  topic: GossipTopic,
  data: Uint8Array,
  from: string,
  h: GossipHandlers,
): Promise<GossipOutcome> {
  if (data.length > MAX_GOSSIP_BYTES) return reject(`oversized gossip message (${data.length} bytes)`);
  try {
    let verdict: Awaited<ReturnType<GossipHandler>>;
    if (topic === 'tx') verdict = await transactionBatch(data, from, h);
    else if (topic === 'block') verdict = await block(data, from, h);
    else if (topic === 'consensus') verdict = h.onConsensus ? await h.onConsensus(data, from) : 'ignore';
    else verdict = h.onEvidence ? await h.onEvidence(data, from) : 'ignore';
    return { verdict: verdict ?? 'accept' };
  } catch (err) {
    if (err instanceof PeerMisbehaviour) return reject(err.message, err.penalty);
    // Cannot be judged here (a block further ahead than the next height): neither relayed nor penalized.
    if (err instanceof IgnoredMessage) return { verdict: 'ignore' };
    if (err instanceof RlpDecodeError) return reject(`malformed RLP on ${topic}: ${err.message}`);
    h.log.warn({ peer: from, topic, err: (err as Error).message }, 'gossip message failed');
    return { verdict: 'ignore' };
  }
}

/**
 * A batch: a list of at most 256 byte strings (nesting 1), each a transaction in its typed encoding.
 * REJECT when any is invalid; ACCEPT when at least one entered the pool; IGNORE when state rules refused them all.
 */
async function transactionBatch(data: Uint8Array, from: string, h: GossipHandlers): Promise<GossipVerdict> {
  const items = decodeRlp(data, 1);
  if (!Array.isArray(items) || items.length > MAX_TXS_PER_GOSSIP || items.some((x) => !(x instanceof Uint8Array)))
    throw new PeerMisbehaviour(`a transaction batch must be a list of at most ${MAX_TXS_PER_GOSSIP} byte strings`);
  const verdicts = await Promise.all((items as Uint8Array[]).map((tx) => h.onTransaction(tx, from)));
  return verdicts.some((v) => v !== 'ignore') ? 'accept' : 'ignore';
}

/**
 * A committed block, relayed only once this node imported it (the head is then this very block): a block
 * for a height already filled, or one further ahead than the next, cannot be judged here and is IGNOREd.
 */
async function block(data: Uint8Array, from: string, h: GossipHandlers): Promise<GossipVerdict> {
  checkRlp(data, BLOCK_RLP_DEPTH);
  const top = decodeRlp(data, BLOCK_RLP_DEPTH);
  if (!Array.isArray(top) || !(top[0] instanceof Uint8Array)) throw new PeerMisbehaviour('a block must be a list');
  const hash = createHash('sha256').update(top[0]).digest('hex');
  const before = h.head().height;
  const verdict = await h.onBlock(data, from);
  if (verdict === 'ignore') return 'ignore';
  const after = h.head();
  return after.height === before + 1 && after.hash.replace(/^0x/, '') === hash ? 'accept' : 'ignore';
}
