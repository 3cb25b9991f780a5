import { DEFAULT_PACK_GAS_LIMIT } from '../ts/consensus/interface.js';
import { chainCommon, checkEvmGasRules, markEvmChecked, packMeter, typedTransactionOf } from '../ts/execution/index.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { CHAIN_ID, type DevChain, type EvmSender, HARDFORK } from './evm-fixtures.js';

/** What one proposal packed out of the transactions offered. */
export interface Packed {
  offered: number;
  included: number;
  gas: bigint;
  /** Wall time of the execution (Chain.execute), ms. */
  executeMs: number;
}

/**
 * Issue 27 section 4: what the proposer packs out of a full block's worth of pending transactions with the
 * node's default packing (--block-pack-gas 5M, --block-pack-ms 400 of a 1 s slot), proposal by proposal
 * alternating between the rule with the measured cost per gas (the pack meter as the blocks before left it) and
 * the slowest-rate rule alone (as before the meter: the meter answers nothing for that proposal). Nothing is
 * committed: the senders' nonces are given back after each proposal.
 */
export async function packRounds(
  dev: DevChain,
  senders: readonly EvmSender[],
  make: () => SignedTransaction[],
  rounds: number,
): Promise<{ slowest: Packed[]; measured: Packed[] }> {
  const common = chainCommon(CHAIN_ID, HARDFORK);
  const out = { slowest: [] as Packed[], measured: [] as Packed[] };
  for (let i = 0; i < rounds; i++) {
    for (const mode of ['slowest', 'measured'] as const) {
      const txs = make();
      for (const tx of txs) {
        checkEvmGasRules(typedTransactionOf(tx, common));
        markEvmChecked(tx);
      }
      // An own property shadows the meter's answer for this proposal only (its samples stay).
      if (mode === 'slowest') Object.assign(packMeter, { msPerGas: () => undefined });
      try {
        const exec = await dev.chain.execute(txs, dev.validator.address, dev.chain.head.timestamp + 1, {
          gas: DEFAULT_PACK_GAS_LIMIT,
          ms: 400,
        });
        const r = exec.result;
        out[mode].push({ offered: txs.length, included: r.included.length, gas: r.gasUsed, executeMs: exec.executeMs });
      } finally {
        delete (packMeter as { msPerGas?: unknown }).msPerGas;
      }
      for (const s of senders) s.nonce--;
    }
  }
  return out;
}
