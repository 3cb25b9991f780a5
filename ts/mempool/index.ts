/**
 * The door of ts/mempool/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export { TxAdmission, RejectedTransactionError, REJECT_REASONS, type RejectReason } from './admission.js';
export { Mempool, type MempoolContents, DEFAULT_MEMPOOL_LIMITS } from './mempool.js';
export { TxJournal, readFrames } from './tx-journal.js';
