export {
  type ChainStatus,
  MAX_BLOCKS_PER_REQUEST,
  MAX_RANGE_BYTES,
  P2PNetwork,
  RangeInterrupted,
  type P2POptions,
  type PeerInfo,
  PeerMisbehaviour,
  peerIdOfNodeKey,
  MAX_GOSSIP_BYTES,
  IgnoredMessage,
  INVALID_MESSAGE_PENALTY,
  type SnapshotOffer,
  type SnapshotPartRequest,
  type SnapshotSource,
} from './p2p.js';
export { loadOrCreateNodeKey, saveNodeKey } from './node-key.js';
export type { GossipTopic } from './gossip-validation.js';
export { varint } from './serving.js';
