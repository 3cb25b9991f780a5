/**
 * The one rule that decides whether a block is valid, for blocks this node makes, blocks from peers
 * and blocks replayed from disk (Lodestar's stateTransition is the model: one function, flags for what a
 * caller has already established). It checks the header against its parent and the schedule, every
 * transaction under the same rules admission applies, executes the block on an overlay and compares
 * the outcome (gas, bloom, receipts root, state root) with the header. On success the state trie holds
 * the block's state and the caller commits it (or reverts with the undo record); on failure nothing of
 * the block is left in the state and an InvalidBlockError names the first rule that failed.
 */
import { crypto } from '../crypto/index.js';
import {
  BLOCK_GAS_LIMIT,
  type BlockEnv,
  type ExecutionResult,
  chainCommon,
  checkStoredEvmTransaction,
  isEvmChecked,
  encodeReceipts,
  executeBlock,
  isEvmTransaction,
  operationEnv,
} from '../execution/index.js';
import {
  type NativeRuleContext,
  operationActivation,
  TxRuleError,
  checkNativeTransaction,
  isLowS,
  isSignatureVerified,
  markSignatureVerified,
  type SignedTransaction,
  encodeTransaction,
} from '../ledger/index.js';
import { StateOverlay, type StateReader, type StateStore, type StateUndo } from '../state/index.js';
import { NodeError, fromHex, isAddress, isHash, toHex } from '../util/index.js';
import {
  BFT_HEADER_VERSION,
  type Block,
  HEADER_VERSION,
  blockHash,
  evidenceHash,
  headerOf,
  lastCommitHash,
  receiptsRootOf,
  txMerkleRoot,
} from './block.js';
import {
  type DoubleSignEvidence,
  EvidenceDecodeError,
  MAX_EVIDENCE_PER_BLOCK,
  applyEvidence,
  decodeEvidence,
  evidenceId,
  evidenceProblem,
} from './evidence.js';
import { evmHardforkAt } from './evm-hardfork.js';
import { type ChainParams, ledgerParams } from './params.js';
import { justificationProblem, justificationSigners } from './justification.js';
import { type ActiveValidator, phaseOfSet, validatorSetAt } from './schedule.js';
import { type SignatureCheck, firstFailing, publicKeyBytes } from './signature-checks.js';

/** A block may be dated at most this far ahead of the validating node's clock (CometBFT-style drift bound). */
export const MAX_BLOCK_FUTURE_DRIFT_S = 15;
/** Encoded size bound of a block's transactions (CometBFT's default block size is ~21 MiB). */
export const MAX_BLOCK_BYTES = 16 * 1024 * 1024;

export const BLOCK_RULES = [
  'version',
  'height',
  'parent_hash',
  'header_hash',
  'proposer',
  'proposer_signature',
  'timestamp_past',
  'timestamp_future',
  'consensus',
  'round',
  'justification',
  'last_commit',
  'evidence',
  'tx_count',
  'block_size',
  'gas_limit',
  'tx_root',
  'tx_malformed',
  'tx_duplicate',
  'tx_invalid',
  'tx_signature',
  'tx_apply',
  'gas_used',
  'logs_bloom',
  'receipts_root',
  'state_root',
] as const;
export type BlockRule = (typeof BLOCK_RULES)[number];

export class InvalidBlockError extends NodeError {
  constructor(
    readonly rule: BlockRule,
    readonly height: number,
    detail: string,
    readonly txid?: string,
  ) {
    super(`invalid block ${height}: ${rule}: ${detail}`, 'INVALID_ARGUMENT');
  }
}

/** What validation needs besides the block: its parent, the state at the parent and the clock. */
export interface BlockContext {
  params: ChainParams;
  parent: Block;
  /** State at the parent (the trie reflects it); the block's changes are applied to it on success. */
  state: StateStore;
  env: (height: number, proposer: string, timestamp: number) => BlockEnv;
  /** Unix seconds of the validating node's clock. */
  now: number;
}

/** The outcome of executing a block's transactions (from production, or computed here). */
export interface BlockExecution {
  overlay: StateOverlay;
  result: ExecutionResult;
}

/**
 * A block checked against a parent (every rule but its commit certificate, which arrives later) with
 * the outcome of its execution, so the commit applies the same changes instead of executing again.
 */
export interface CheckedBlock {
  parentHash: string;
  changes: StateOverlay['changes'];
  result: ExecutionResult;
  encodedReceipts: Uint8Array;
}

export interface AppliedBlock {
  block: Block;
  changes: StateOverlay['changes'];
  undo: StateUndo;
  result: ExecutionResult;
  /** The receipts' storage encoding (hashed into receipts_root; written as is). */
  encodedReceipts: Uint8Array;
}

/** What commitChecked needs of a sealed or checked block (its execution outcome). */
export function checkedOf(a: AppliedBlock): Omit<CheckedBlock, 'parentHash'> {
  return { changes: a.changes, result: a.result, encodedReceipts: a.encodedReceipts };
}

/** The rule context for a transaction included at height in a block dated timestamp. */
export function txRuleContext(params: ChainParams, height: number, timestamp: number): NativeRuleContext {
  return { chainId: params.chainId, height, now: timestamp, operations: operationActivation(ledgerParams(params)) };
}

/** Validate a block against its parent and apply it to ctx.state. Throws InvalidBlockError; state untouched then. */
export async function validateAndApply(
  ctx: BlockContext,
  block: Block,
  opts: { proposal?: boolean } = {},
): Promise<AppliedBlock> {
  checkHeader(ctx, block, opts.proposal === true);
  const evidence = checkConsensusData(ctx, block);
  checkTransactions(ctx, block);
  const overlay = new StateOverlay(ctx.state);
  const env = { ...ctx.env(block.index, block.validator, block.timestamp), ...lastCommitEnv(block.last_commit) };
  applyEvidence(overlay, evidence, operationEnv(env));
  const result = await executeBlock(env, overlay, ctx.state, block.transactions);
  const r = result;
  const fail = (rule: BlockRule, detail: string, txid?: string): never => {
    throw new InvalidBlockError(rule, block.index, detail, txid);
  };
  if (r.dropped.length > 0)
    fail('tx_apply', `transaction ${r.dropped[0].tx.txid} does not apply: ${r.dropped[0].reason}`, r.dropped[0].tx.txid);
  if (r.deferred.length > 0)
    fail('gas_limit', `transaction ${r.deferred[0].txid} exceeds the block gas limit`, r.deferred[0].txid);
  return checkOutcomeAndApply(ctx, block, { overlay, result });
}

/**
 * The same rules for a block whose execution the caller already ran on exactly this parent state
 * (block production): header and transaction rules run in full, the execution is not repeated, and
 * its outcome is compared with the header as for any block. Synchronous, so production can update
 * its mempool in the same tick. appliedUndo: the execution's changes are already in the trie.
 */
export function validateExecuted(
  ctx: BlockContext,
  block: Block,
  exec: BlockExecution,
  appliedUndo?: StateUndo,
  proposal = false,
): AppliedBlock {
  try {
    // The header is judged against the parent's state (validator set, phase), not the block's own changes.
    checkHeader(ctx, block, proposal, appliedUndo ? parentView(ctx.state, appliedUndo) : ctx.state);
    checkConsensusData(ctx, block, appliedUndo);
    checkTransactions(ctx, block);
  } catch (err) {
    if (appliedUndo) ctx.state.revert(appliedUndo);
    throw err;
  }
  return checkOutcomeAndApply(ctx, block, exec, appliedUndo);
}

/** The execution environment's `lastCommit` (signers of the parent), from a BFT block's last_commit. */
export function lastCommitEnv(lastCommit: Uint8Array): { lastCommit?: readonly string[] } {
  return lastCommit.length > 0 ? { lastCommit: justificationSigners(lastCommit) } : {};
}

/**
 * Commit-time validation of a BFT block whose proposal was checked (and executed) on this very parent:
 * the header rules run again, now with the commit certificate, and the checked changes are applied
 * and compared with the state root, without executing the transactions a second time.
 */
export function validateChecked(ctx: BlockContext, block: Block, checked: CheckedBlock): AppliedBlock {
  if (checked.parentHash !== ctx.parent.hash || block.previous_hash !== ctx.parent.hash) {
    throw new InvalidBlockError('parent_hash', block.index, 'the block was checked against another parent');
  }
  checkHeader(ctx, block, false);
  const undo = ctx.state.applyChanges(checked.changes);
  const root = toHex(ctx.state.root());
  if (root !== block.state_root) {
    ctx.state.revert(undo);
    throw new InvalidBlockError('state_root', block.index, `header ${block.state_root}, execution ${root}`);
  }
  return { block, changes: checked.changes, undo, result: checked.result, encodedReceipts: checked.encodedReceipts };
}

/**
 * The consensus data of a version-2 (BFT) block: `last_commit` is a valid commit certificate of the
 * parent when the parent is a BFT block (empty otherwise), and each evidence item is real, verified,
 * of a validator of its height, recent, and not included before (in an earlier block or this one).
 * appliedUndo: the block's changes are already in the state (production), so the "included before"
 * check reads the state as it was before them.
 */
function checkConsensusData(ctx: BlockContext, b: Block, appliedUndo?: StateUndo): DoubleSignEvidence[] {
  const fail = (rule: BlockRule, detail: string): never => {
    throw new InvalidBlockError(rule, b.index, detail);
  };
  if (b.version < BFT_HEADER_VERSION) {
    if (b.last_commit.length > 0 || b.evidence.length > 0)
      fail('evidence', `a version ${b.version} block carries consensus data`);
    return [];
  }
  const { params, parent } = ctx;
  if (lastCommitHash(b.last_commit) !== b.last_commit_hash) fail('last_commit', 'last_commit_hash does not match the body');
  if (evidenceHash(b.evidence) !== b.evidence_hash) fail('evidence', 'evidence_hash does not match the body');
  const state = appliedUndo ? parentView(ctx.state, appliedUndo) : ctx.state;
  // The parent's own stored certificate was verified when the parent was committed here (or built from
  // votes verified on arrival): the same bytes need no second round of signature checks.
  const known = parent.justification.length > 0 && Buffer.compare(parent.justification, b.last_commit) === 0;
  if (parent.consensus === 'DPoS+BFT' && !known) {
    const problem = justificationProblem(
      params.chainId,
      parent.index,
      parent.hash,
      b.last_commit,
      validatorSetAt(params, state, parent.index),
    );
    if (problem) fail('last_commit', `not a commit certificate of the parent: ${problem}`);
  } else if (parent.consensus !== 'DPoS+BFT' && b.last_commit.length > 0) fail('last_commit', 'the parent is not a BFT block');
  if (b.evidence.length > MAX_EVIDENCE_PER_BLOCK)
    fail('evidence', `${b.evidence.length} items, at most ${MAX_EVIDENCE_PER_BLOCK}`);
  const seen = new Set<string>();
  return b.evidence.map((bytes, i) => {
    let e: DoubleSignEvidence;
    try {
      e = decodeEvidence(bytes);
    } catch (err) {
      if (!(err instanceof EvidenceDecodeError)) throw err;
      return fail('evidence', `item ${i}: ${err.message}`);
    }
    const id = evidenceId(e);
    if (seen.has(id)) fail('evidence', `item ${i} appears twice`);
    seen.add(id);
    const problem = evidenceProblem(params.chainId, e, b.index, (h) => validatorSetAt(params, state, h), state);
    if (problem) fail('evidence', `item ${i}: ${problem}`);
    return e;
  });
}

function checkOutcomeAndApply(ctx: BlockContext, block: Block, exec: BlockExecution, appliedUndo?: StateUndo): AppliedBlock {
  const fail = (rule: BlockRule, detail: string, txid?: string): never => {
    if (appliedUndo) ctx.state.revert(appliedUndo);
    throw new InvalidBlockError(rule, block.index, detail, txid);
  };
  const r = exec.result;
  // Production hands in the execution of its candidate list, from which it dropped what could not apply
  // (dropping changes no state); the block must then hold exactly the included transactions, in order.
  if (r.included.length !== block.transactions.length || r.included.some((tx, i) => tx !== block.transactions[i])) {
    fail('tx_apply', 'the execution does not cover exactly the block transactions');
  }
  if (r.gasUsed !== block.gas_used) fail('gas_used', `header says ${block.gas_used}, execution used ${r.gasUsed}`);
  if (toHex(r.logsBloom) !== block.logs_bloom) fail('logs_bloom', 'header bloom differs from the execution logs');
  const encodedReceipts = encodeReceipts(r.receipts);
  if (block.version >= 1 && receiptsRootOf(encodedReceipts) !== block.receipts_root) {
    fail('receipts_root', `header ${block.receipts_root}, execution ${receiptsRootOf(encodedReceipts)}`);
  }
  const undo = appliedUndo ?? ctx.state.applyChanges(exec.overlay.changes);
  const root = toHex(ctx.state.root());
  if (root !== block.state_root) {
    ctx.state.revert(undo);
    throw new InvalidBlockError('state_root', block.index, `header ${block.state_root}, execution ${root}`);
  }
  return { block, changes: exec.overlay.changes, undo, result: r, encodedReceipts };
}

/**
 * proposal: a BFT proposal being voted on carries no justification yet (its commit certificate is
 * attached when precommits reach the quorum); every other block under BFT must carry a valid one.
 */
function checkHeader(ctx: BlockContext, b: Block, proposal = false, state: StateReader = ctx.state): void {
  const fail = (rule: BlockRule, detail: string): never => {
    throw new InvalidBlockError(rule, b.index, detail);
  };
  const { params, parent } = ctx;
  // The height's validator set, read once: the phase, the proposer and the certificate all depend on it.
  const set = validatorSetAt(params, state, b.index);
  const phase = phaseOfSet(params, b.index, set);
  const bft = phase === 'DPoS+BFT';
  const version = bft ? BFT_HEADER_VERSION : HEADER_VERSION;
  if (b.version !== version && !(b.version === 0 && parent.version === 0)) {
    fail('version', `header version ${b.version} (expected ${version})`);
  }
  if (b.index !== parent.index + 1) fail('height', `height ${b.index} does not follow the parent ${parent.index}`);
  if (b.previous_hash !== parent.hash) fail('parent_hash', `previous_hash ${b.previous_hash} is not the parent ${parent.hash}`);
  if (blockHash(headerOf(b)) !== b.hash) fail('header_hash', 'hash does not match the header');
  // Under BFT the proposer rotates with the round as well (a round whose proposer is down moves on).
  const proposer = set.length ? set[(b.index + (bft ? b.round : 0)) % set.length] : null;
  if (!proposer || b.validator !== proposer.address)
    fail('proposer', `proposer ${b.validator} is not the scheduled ${proposer?.address}`);
  const sig = /^[0-9a-f]{128}$/.test(b.signature) ? fromHex(b.signature) : null;
  if (!sig || !isLowS(sig) || firstFailing([proposerCheck(b, proposer as ActiveValidator)])) {
    fail('proposer_signature', 'the proposer signature does not verify (or is not low-S)');
  }
  if (b.timestamp < parent.timestamp)
    fail('timestamp_past', `timestamp ${b.timestamp} is before the parent's ${parent.timestamp}`);
  if (b.timestamp > ctx.now + MAX_BLOCK_FUTURE_DRIFT_S) {
    fail('timestamp_future', `timestamp ${b.timestamp} is more than ${MAX_BLOCK_FUTURE_DRIFT_S} s ahead of ${ctx.now}`);
  }
  if (b.consensus !== phase) fail('consensus', `consensus ${b.consensus}, the chain runs ${phase} at this height`);
  if (!bft && b.round !== 0) fail('round', `round ${b.round} outside BFT`);
  if (!bft || proposal) {
    if (b.justification.length > 0)
      fail('justification', bft ? 'a proposal carries no justification' : 'justification outside BFT');
  } else {
    const problem = justificationProblem(params.chainId, b.index, b.hash, b.justification, set);
    if (problem) fail('justification', problem);
  }
  if (b.tx_count !== b.transactions.length) fail('tx_count', `tx_count ${b.tx_count}, body has ${b.transactions.length}`);
  const limit = ctx.params.blockGasLimit ?? BLOCK_GAS_LIMIT;
  if (b.gas_used > limit) fail('gas_limit', `gas_used ${b.gas_used} above the block gas limit ${limit}`);
}

const proposerCheck = (b: Block, proposer: ActiveValidator): SignatureCheck => ({
  sig: fromHex(b.signature),
  digest: fromHex(b.hash),
  pub: publicKeyBytes(proposer.public_key),
  what: `the proposer signature of block ${b.index}`,
});

/** The state before a change set was applied: the undo record's values first, then the store. */
function parentView(state: StateReader, undo: StateUndo): StateReader {
  return { get: (k) => (undo.has(k) ? undo.get(k) : state.get(k)) };
}

/** Field shapes of a transaction decoded from untrusted bytes (the JSON path checks these at parse time). */
export function shapeProblem(tx: SignedTransaction): string | null {
  if (!isHash(tx.txid)) return 'txid';
  if (!isAddress(tx.from_address) || !isAddress(tx.to_address)) return 'address';
  if (!Number.isSafeInteger(tx.timestamp) || !Number.isSafeInteger(tx.chain_id)) return 'timestamp or chain_id';
  if (isEvmTransaction(tx)) return tx.signature.length > 0 ? null : 'raw bytes';
  if (!/^[0-9a-f]{128}$/.test(tx.signature)) return 'signature';
  if (!/^04[0-9a-f]{128}$/.test(tx.public_key)) return 'public_key';
  return null;
}

function checkTransactions(ctx: BlockContext, b: Block): void {
  const txs = b.transactions;
  let size = 0;
  for (const tx of txs) size += encodeTransaction(tx).length;
  if (size > MAX_BLOCK_BYTES)
    throw new InvalidBlockError('block_size', b.index, `${size} bytes of transactions, limit ${MAX_BLOCK_BYTES}`);
  if (txMerkleRoot(txs, b.version) !== b.merkle_root)
    throw new InvalidBlockError('tx_root', b.index, 'merkle_root does not match the body');
  const rules = txRuleContext(ctx.params, b.index, b.timestamp);
  const common = chainCommon(ctx.params.chainId, evmHardforkAt(ctx.params, b.index));
  const seen = new Set<string>();
  const toVerify: { tx: SignedTransaction; digest: Uint8Array }[] = [];
  for (const tx of txs) {
    // Transactions this node admitted were shape-checked when parsed; decoded ones are checked here.
    const bad = isSignatureVerified(tx) || isEvmChecked(tx) ? null : shapeProblem(tx);
    if (bad) throw new InvalidBlockError('tx_malformed', b.index, `transaction ${tx.txid}: malformed ${bad}`, tx.txid);
    if (seen.has(tx.txid)) throw new InvalidBlockError('tx_duplicate', b.index, `transaction ${tx.txid} appears twice`, tx.txid);
    seen.add(tx.txid);
    try {
      if (isEvmTransaction(tx)) {
        if (b.index < ctx.params.activation.evm) throw new TxRuleError('EVM not active yet', 'not_active');
        checkStoredEvmTransaction(tx, common, ctx.params.network === 'dev', ctx.params.blockGasLimit);
      } else {
        const { digest } = checkNativeTransaction(tx, rules);
        if (!isSignatureVerified(tx)) toVerify.push({ tx, digest });
      }
    } catch (err) {
      if (!(err instanceof NodeError)) throw err;
      throw new InvalidBlockError('tx_invalid', b.index, `transaction ${tx.txid}: ${err.message}`, tx.txid);
    }
  }
  if (toVerify.length === 0) return;
  const ok = crypto().verifyBatch(
    toVerify.map((v) => fromHex(v.tx.signature)),
    toVerify.map((v) => v.digest),
    toVerify.map((v) => fromHex(v.tx.public_key)),
  );
  ok.forEach((good, i) => {
    const tx = toVerify[i].tx;
    if (!good) throw new InvalidBlockError('tx_signature', b.index, `bad signature on transaction ${tx.txid}`, tx.txid);
    markSignatureVerified(tx);
  });
}
