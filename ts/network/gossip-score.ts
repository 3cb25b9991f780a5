/**
 * gossipsub's own peer score, set on purpose (docs/p2p.md, "gossipsub score parameters"). The node
 * judges messages itself (gossip-validation.ts) and bans through its own score (peer-score.ts); gossipsub's
 * score only decides whom it gossips with. Its defaults were harmful here: the IP-colocation penalty
 * (above 10 peers per IP, scores kept an hour after disconnect) graylisted every peer of an IP once 12
 * harmless peers from it had come and gone, and on a localhost devnet or behind one NAT the validators
 * share that IP (issue 29, finding 3).
 */
import {
  type PeerScoreParams,
  type PeerScoreThresholds,
  type TopicScoreParams,
  createTopicScoreParams,
} from '@libp2p/gossipsub/score';

/** Counters decay once a second; a factor per interval of 0.5 ** (1 / half-life in seconds). */
const DECAY_INTERVAL_MS = 1000;
const decayPerInterval = (halfLifeS: number): number => 0.5 ** (DECAY_INTERVAL_MS / 1000 / halfLifeS);

/**
 * Per topic: a small reward for time in the mesh and first deliveries (capped), a penalty for invalid
 * messages (REJECTs, the square of their decaying count), and no mesh-delivery-rate penalty (P3): the
 * evidence topic is silent for hours, a full node relays little, and a quiet honest peer is no fault.
 */
function topicParams(weight: number): TopicScoreParams {
  return createTopicScoreParams({
    topicWeight: weight,
    timeInMeshWeight: 0.01,
    timeInMeshQuantum: 1000,
    timeInMeshCap: 300,
    firstMessageDeliveriesWeight: 0.5,
    firstMessageDeliveriesDecay: decayPerInterval(60),
    firstMessageDeliveriesCap: 20,
    meshMessageDeliveriesWeight: 0,
    meshFailurePenaltyWeight: 0,
    invalidMessageDeliveriesWeight: -20,
    invalidMessageDeliveriesDecay: decayPerInterval(300),
  });
}

export function gossipScoreParams(topics: {
  tx: string;
  block: string;
  consensus: string;
  evidence: string;
}): Partial<PeerScoreParams> {
  return {
    topics: {
      [topics.consensus]: topicParams(1),
      [topics.block]: topicParams(1),
      [topics.tx]: topicParams(0.5),
      [topics.evidence]: topicParams(0.5),
    },
    // Positive scores only break ties in mesh selection: one peer cannot buy its way past a penalty.
    topicScoreCap: 10,
    appSpecificScore: () => 0,
    appSpecificWeight: 1,
    // Off: validators of one operator, sentries, NATs and every localhost devnet share an IP. Per-IP
    // offences are the node's own score's business (peer-score.ts), counted from what peers sent.
    IPColocationFactorWeight: 0,
    IPColocationFactorThreshold: 10,
    // Broken gossip promises (IWANT not answered) under load: tolerated up to 10, then a mild square.
    behaviourPenaltyWeight: -1,
    behaviourPenaltyThreshold: 10,
    behaviourPenaltyDecay: decayPerInterval(60),
    decayInterval: DECAY_INTERVAL_MS,
    decayToZero: 0.01,
    // A disconnected peer's counters are kept 10 minutes (the default hour outlived every reason).
    retainScore: 10 * 60_000,
  };
}

/**
 * One REJECT scores -20 × topic weight, two -80: gossip to the peer stops after one invalid consensus or
 * block message, publishing to it after two, and its RPCs are ignored (graylist) after three — by then
 * the node's own score has banned it. Honest peers are never REJECTed, so they never come near.
 */
export const gossipScoreThresholds: Partial<PeerScoreThresholds> = {
  gossipThreshold: -20,
  publishThreshold: -60,
  graylistThreshold: -150,
  acceptPXThreshold: 100,
  opportunisticGraftThreshold: 5,
};
