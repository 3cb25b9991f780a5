/**
 * Signatures of a run of consecutive blocks verified ahead of their import, in one native batch
 * (parallel over all cores): a syncing node holds hundreds of blocks at once, while the rules verify each
 * block's handful of header and certificate signatures, and its transactions', block by block. Nothing
 * here decides validity: a transaction whose signature verified is marked (as admission marks it), a
 * header or certificate signature is remembered for exactly its digest and key, and the import then runs
 * every rule of `validateAndApply` as for any block, skipping only the verification it finds done.
 * Whatever is not verified here (an invalid signature, a key the guess below got wrong) is verified, and
 * rejected, by the rule itself.
 */
import { SignatureBatch, verifyOffThread } from '../crypto/index.js';
import { checkNativeTransaction, isSignatureVerified, markSignatureVerified, type SignedTransaction } from '../ledger/index.js';
import { isEvmTransaction } from '../execution/index.js';
import type { StateReader } from '../state/index.js';
import { fromHex } from '../util/index.js';
import type { Block } from './block.js';
import { certificateChecks } from './justification.js';
import type { ChainParams } from './params.js';
import { phaseOfSet, validatorSetAt } from './schedule.js';
import { type SignatureCheck, publicKeyBytes, rememberVerified } from './signature-checks.js';
import { shapeProblem, txRuleContext } from './validate-block.js';

export interface VerifiedAhead {
  /** Signatures verified (valid or not). */
  checked: number;
  /** Of those, invalid (the block's own import will reject it). */
  invalid: number;
}

/**
 * The signatures of a run of blocks in one batch: consensus ones (header, certificates) first, then the
 * transactions', whose objects are kept to be marked.
 */
interface AheadBatch {
  batch: SignatureBatch;
  consensus: SignatureCheck[];
  txs: SignedTransaction[];
}

/**
 * Verify the signatures of blocks that extend `head` in order, against the validator sets the state at
 * the head predicts for their heights (a set that changes within the run only costs a second
 * verification at import). The batch runs on the verification threads (verify-thread.ts), so the caller
 * may import earlier blocks meanwhile; the marks are set when it resolves.
 */
export async function verifyBlocksAhead(
  params: ChainParams,
  state: StateReader,
  head: Block,
  blocks: readonly Block[],
): Promise<VerifiedAhead> {
  const { batch, consensus, txs } = gather(params, state, head, blocks);
  if (batch.length === 0) return { checked: 0, invalid: 0 };
  const ok = await verifyOffThread(batch);
  rememberVerified(consensus.filter((_, i) => ok[i] === 1));
  let invalid = 0;
  for (let i = 0; i < batch.length; i++) {
    if (ok[i] !== 1) invalid++;
    else if (i >= consensus.length) markSignatureVerified(txs[i - consensus.length]);
  }
  return { checked: batch.length, invalid };
}

function gather(params: ChainParams, state: StateReader, head: Block, blocks: readonly Block[]): AheadBatch {
  const consensus: SignatureCheck[] = [];
  let parentJustification = head.justification;
  for (const b of blocks) {
    const set = validatorSetAt(params, state, b.index);
    if (set.length > 0 && /^[0-9a-f]{128}$/.test(b.signature)) {
      const round = phaseOfSet(params, b.index, set) === 'DPoS+BFT' ? b.round : 0;
      const proposer = set[(b.index + round) % set.length];
      consensus.push({ sig: fromHex(b.signature), digest: fromHex(b.hash), pub: publicKeyBytes(proposer.public_key), what: '' });
    }
    if (b.justification.length > 0) consensus.push(...certificate(params.chainId, b.index, b.hash, b.justification, set));
    // A last_commit equal to the parent's stored certificate is not verified again by the rule.
    if (b.last_commit.length > 0 && Buffer.compare(b.last_commit, parentJustification) !== 0) {
      const parentSet = validatorSetAt(params, state, b.index - 1);
      consensus.push(...certificate(params.chainId, b.index - 1, b.previous_hash, b.last_commit, parentSet));
    }
    parentJustification = b.justification;
  }
  const batch = new SignatureBatch();
  for (const c of consensus) batch.add(c.sig, c.digest, c.pub);
  const txs: SignedTransaction[] = [];
  for (const b of blocks) {
    const rules = txRuleContext(params, b.index, b.timestamp);
    for (const tx of b.transactions) {
      if (isEvmTransaction(tx) || isSignatureVerified(tx) || shapeProblem(tx)) continue;
      try {
        // The shape check above guarantees 128 and 130 hex digits.
        batch.add(tx.signature, checkNativeTransaction(tx, rules).digest, tx.public_key);
        txs.push(tx);
      } catch {
        // Broken under a rule: the import rejects the block with that rule's error.
      }
    }
  }
  return { batch, consensus, txs };
}

function certificate(
  chainId: number,
  height: number,
  hash: string,
  bytes: Uint8Array,
  set: Parameters<typeof certificateChecks>[4],
): SignatureCheck[] {
  const c = certificateChecks(chainId, height, hash, bytes, set);
  return 'checks' in c ? c.checks : [];
}
