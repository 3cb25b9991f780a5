import { invariantViolations } from '../ledger/index.js';
import { StateOverlay, StateStore } from '../state/index.js';
import { toHex } from '../util/index.js';
import { type Block, blockHash, headerOf, txMerkleRoot } from './block.js';
import { applyGenesisAlloc } from './genesis-state.js';
import type { ChainReader } from './interface.js';
import { type BlockRule, InvalidBlockError, validateAndApply } from './validate-block.js';

export interface ChainValidation {
  valid: boolean;
  checked_blocks: number;
  height: number;
  first_bad_height: number | null;
  /**
   * The block rule that failed first (validate-block.ts BLOCK_RULES, or `encoding`/`genesis`), or
   * `invariant` when every block checks but a native module's invariant does not hold on the final state.
   */
  rule: BlockRule | 'encoding' | 'genesis' | 'invariant' | null;
  error: string | null;
  elapsed_ms: number;
}

/**
 * Re-verify the whole chain from genesis with the same validateAndApply that production and block
 * import use, on a fresh state: every header rule, every transaction rule and signature, and every
 * outcome (gas, bloom, receipts root, state root) after re-executing each block, then every native module's
 * invariants on the rebuilt state (one pass over it). Reads blocks one at a time, so memory stays bounded by
 * the state size. Never throws for a bad chain: it answers which height and rule failed.
 */
export async function validateChain(chain: ChainReader, upTo = chain.height): Promise<ChainValidation> {
  const t0 = performance.now();
  const state = new StateStore();
  const genesis = new StateOverlay(state);
  applyGenesisAlloc(chain.params, genesis);
  state.applyChanges(genesis.changes);
  const result = (height: number, rule: ChainValidation['rule'], error: string | null): ChainValidation => ({
    valid: rule === null,
    checked_blocks: rule === null || rule === 'invariant' ? upTo + 1 : height,
    height: upTo,
    first_bad_height: rule === null ? null : height,
    rule,
    error,
    elapsed_ms: Math.round(performance.now() - t0),
  });
  let parent: Block | null = null;
  for (let h = 0; h <= upTo; h++) {
    let b: Block | null;
    try {
      b = await chain.blocks.getBlock(h);
    } catch (err) {
      return result(h, 'encoding', `block ${h} does not decode: ${(err as Error).message}`);
    }
    if (!b) return result(h, 'encoding', `block ${h} is missing`);
    if (!parent) {
      if (blockHash(headerOf(b)) !== b.hash) return result(h, 'genesis', 'genesis header hash mismatch');
      if (b.tx_count !== 0 || b.transactions.length !== 0 || txMerkleRoot([], b.version) !== b.merkle_root) {
        return result(h, 'genesis', 'genesis must have no transactions');
      }
      if (toHex(state.root()) !== b.state_root) return result(h, 'genesis', 'genesis state root differs from the allocation');
    } else {
      // The dev chain's writes made between blocks are part of the next block (dev-patches.ts).
      const devWrites = await chain.devPatchAt(h);
      if (devWrites) state.applyChanges(devWrites);
      try {
        await validateAndApply(
          {
            params: chain.params,
            parent,
            state,
            env: (height, proposer, ts) => chain.blockEnv(height, proposer, ts),
            now: chain.now(),
          },
          b,
        );
      } catch (err) {
        if (err instanceof InvalidBlockError) return result(h, err.rule, err.message);
        return result(h, 'tx_apply', `block ${h} could not be validated: ${(err as Error).message}`);
      }
    }
    parent = b;
  }
  const violations = invariantViolations(state);
  if (violations.length > 0) return result(upTo, 'invariant', violations.join('; '));
  return result(upTo, null, null);
}
