/**
 * The door of ts/consensus/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export { BftEngine, type BftObserver, type ConsensusMessage, InvalidConsensusMessage } from './bft.js';
export { type EvidenceEntry, EvidencePool, InvalidEvidenceError } from './evidence-pool.js';
export { decodeConsensusMessage, encodeConsensusMessage, encodeForGossip } from './messages.js';
export { PoaEngine } from './poa.js';
export { SignGuard } from './privval.js';
export { ConsensusGossip } from './consensus-gossip.js';
