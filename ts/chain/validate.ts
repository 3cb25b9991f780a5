import { executeBlock, isEvmTransaction } from '../execution/index.js';
import { checkTransactionIntegrity } from '../ledger/transaction.js';
import { StateOverlay, StateStore } from '../state/state-store.js';
import { crypto } from '../crypto/index.js';
import { fromHex, toHex } from '../util/hex.js';
import { blockHash, headerOf, txMerkleRoot } from './block.js';
import { applyGenesisAlloc, Chain } from './chain.js';

export interface ChainValidation {
  valid: boolean;
  checked_blocks: number;
  height: number;
  first_bad_height: number | null;
  error: string | null;
  elapsed_ms: number;
}

/**
 * Re-verify the whole chain from genesis: hash links, header hashes, merkle roots, proposer
 * signatures, every transaction's signature, and the state root after re-executing each block
 * on a fresh state. Reads blocks one at a time, so memory stays bounded by the state size.
 */
export async function validateChain(chain: Chain, upTo = chain.height): Promise<ChainValidation> {
  const t0 = performance.now();
  const state = new StateStore();
  const genesis = new StateOverlay(state);
  applyGenesisAlloc(chain.params, genesis);
  state.applyChanges(genesis.changes);
  const keys = new Map(chain.params.validators.map((v) => [v.address, v.public_key]));
  let prevHash = '';
  const fail = (height: number, error: string): ChainValidation => ({
    valid: false,
    checked_blocks: height,
    height: upTo,
    first_bad_height: height,
    error,
    elapsed_ms: Math.round(performance.now() - t0),
  });
  for (let h = 0; h <= upTo; h++) {
    const b = await chain.blocks.getBlock(h);
    if (!b) return fail(h, 'block missing');
    if (blockHash(headerOf(b)) !== b.hash) return fail(h, 'header hash mismatch');
    if (h > 0 && b.previous_hash !== prevHash) return fail(h, 'previous_hash does not link to the parent');
    if (txMerkleRoot(b.transactions) !== b.merkle_root) return fail(h, 'merkle root mismatch');
    if (b.tx_count !== b.transactions.length) return fail(h, 'tx_count mismatch');
    if (h > 0) {
      const pub = keys.get(b.validator);
      if (!pub || !Chain.verifyBlockSignature(b, pub)) return fail(h, 'bad proposer signature');
      // Native signatures are checked here; an EVM transaction's signature is its sender recovery,
      // which re-execution performs (a bad one fails to apply).
      const native = b.transactions.filter((tx) => !isEvmTransaction(tx));
      const digests = native.map((tx) => checkTransactionIntegrity(tx, chain.params.chainId));
      const ok = crypto().verifyBatch(
        native.map((tx) => fromHex(tx.signature)),
        digests,
        native.map((tx) => fromHex(tx.public_key)),
      );
      const bad = ok.indexOf(false);
      if (bad >= 0) return fail(h, `bad signature on transaction ${native[bad].txid}`);
      const overlay = new StateOverlay(state);
      const r = await executeBlock(chain.blockEnv(h, b.validator, b.timestamp), overlay, state, b.transactions);
      if (r.dropped.length > 0 || r.deferred.length > 0) {
        const tx = r.dropped[0]?.tx ?? r.deferred[0];
        return fail(h, `transaction ${tx.txid} does not apply: ${r.dropped[0]?.reason ?? 'exceeds the block gas limit'}`);
      }
      if (r.gasUsed !== b.gas_used || toHex(r.logsBloom) !== b.logs_bloom)
        return fail(h, 'gas used or logs bloom mismatch after re-execution');
      state.applyChanges(overlay.changes);
    }
    if (toHex(state.root()) !== b.state_root) return fail(h, 'state root mismatch after re-execution');
    prevHash = b.hash;
  }
  return {
    valid: true,
    checked_blocks: upTo + 1,
    height: upTo,
    first_bad_height: null,
    error: null,
    elapsed_ms: Math.round(performance.now() - t0),
  };
}
