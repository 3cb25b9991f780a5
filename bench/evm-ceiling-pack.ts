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
 * node's default packing (--block-pack-gas 5M, --block-pack-ms 400 of a 1 s slot), `measured`: with the pack
 * meter as the blocks before left it (the cost per gas measured), else with it emptied (the slowest-rate rule
 * alone, as before the meter). Nothing is committed: the senders' nonces are given back after each proposal.
 */
export async function packRounds(
  dev: DevChain,
  senders: readonly EvmSender[],
  make: () => SignedTransaction[],
  rounds: number,
  measured: boolean,
): Promise<Packed[]> {
  const common = chainCommon(CHAIN_ID, HARDFORK);
  const out: Packed[] = [];
  for (let i = 0; i < rounds; i++) {
    const saved = packMeter.msPerGas();
    if (!measured) packMeter.reset();
    const txs = make();
    for (const tx of txs) {
      checkEvmGasRules(typedTransactionOf(tx, common));
      markEvmChecked(tx);
    }
    const exec = await dev.chain.execute(txs, dev.validator.address, dev.chain.head.timestamp + 1, {
      gas: DEFAULT_PACK_GAS_LIMIT,
      ms: 400,
    });
    out.push({ offered: txs.length, included: exec.result.included.length, gas: exec.result.gasUsed, executeMs: exec.executeMs });
    for (const s of senders) s.nonce--;
    if (!measured && saved !== undefined) packMeter.record(30_000_000n, saved * 30_000_000);
  }
  return out;
}
