export { type ChainStatus, P2PNetwork, type P2POptions, type PeerInfo, PeerMisbehaviour, peerIdOfNodeKey } from './p2p.js';
export { loadOrCreateNodeKey, saveNodeKey } from './node-key.js';
