import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { LOOP_INIT_CODE } from './evm-gas.js';
import { type EvmSender, callData, deployData } from './evm-fixtures.js';

/**
 * The blocks of the execution ceiling bench (bench/evm-ceiling.ts), each from distinct senders (one transaction
 * per sender and block, as a block of many users):
 * - `erc20`: every holder moves 1 token unit to the next (34,250 gas each);
 * - `mix`: token deployments, storage-heavy calls (fresh slots, updates of the previous block's slots), token
 *   transfers, and reverts (a transfer beyond the balance, slot writes rolled back), interleaved;
 * - `loop`: one transaction burning 29M gas in JUMPDEST PUSH1 0 JUMP (it fails out of gas by design).
 */
export type WorkloadName = 'erc20' | 'mix' | 'loop';
export const WORKLOADS: readonly WorkloadName[] = ['erc20', 'mix', 'loop'];

/** The contracts the workloads call, deployed by the bench's setup blocks. */
export interface CeilingContracts {
  token: string;
  store: string;
}

/** Per mix block: how many transactions of each kind (about 27M gas in all). */
const MIX = { deploys: 4, fills: 72, bumps: 72, transfers: 180, failedTransfers: 36, rolledBack: 36 };
/** Slots each storage call writes. */
const SLOTS_PER_CALL = 5n;

/** Round-robin over the lists, so every kind is spread over the block. */
function interleave<T>(lists: readonly T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; out.length < lists.reduce((n, l) => n + l.length, 0); i++) {
    for (const l of lists) if (i < l.length) out.push(l[i]);
  }
  return out;
}

/** Makes the transactions of a fresh block of a workload (each call signs new ones with the next nonces). */
export function workloadBlocks(
  holders: readonly EvmSender[],
  c: CeilingContracts,
): { setup: () => SignedTransaction[]; blocks: Record<WorkloadName, () => SignedTransaction[]> } {
  const next = (i: number) => holders[(i + 1) % holders.length].address;
  let mixBlock = 1n;
  const mix = (): SignedTransaction[] => {
    const total = Object.values(MIX).reduce((a, b) => a + b, 0);
    if (total > holders.length) throw new Error(`the mix needs ${total} holders`);
    let h = 0;
    const take = (n: number) => holders.slice(h, (h += n));
    // Slot ranges: this block's fresh ones, and the previous block's (its bumps update them).
    const fresh = (i: number) => (mixBlock * 1000n + BigInt(i)) * SLOTS_PER_CALL;
    const previous = (i: number) => ((mixBlock - 1n) * 1000n + BigInt(i)) * SLOTS_PER_CALL;
    const deploys = take(MIX.deploys).map((s) =>
      s.tx(undefined, deployData('Token', ['Mix', 'MIX', 10n ** 24n]), { gas: 1_500_000n }),
    );
    const fills = take(MIX.fills).map((s, i) => s.tx(c.store, callData('Store', 'fill', [fresh(i), SLOTS_PER_CALL])));
    const bumps = take(MIX.bumps).map((s, i) =>
      s.tx(c.store, callData('Store', 'bump', [previous(i % MIX.fills), SLOTS_PER_CALL])),
    );
    const transfers = take(MIX.transfers).map((s, i) =>
      s.tx(c.token, callData('Token', 'transfer', [next(i), 1n]), { gas: 60_000n }),
    );
    const failedTransfers = take(MIX.failedTransfers).map((s, i) =>
      s.tx(c.token, callData('Token', 'transfer', [next(i), 10n ** 40n]), { gas: 60_000n }),
    );
    const rolledBack = take(MIX.rolledBack).map((s, i) =>
      s.tx(c.store, callData('Store', 'fillThenRevert', [fresh(MIX.fills + i), SLOTS_PER_CALL])),
    );
    mixBlock++;
    return [...deploys, ...interleave([fills, bumps, transfers, failedTransfers, rolledBack])];
  };
  return {
    // The slots the first mix block's bumps update (as every later mix block's bumps update the block's before).
    setup: () =>
      holders
        .slice(0, MIX.fills)
        .map((s, i) => s.tx(c.store, callData('Store', 'fill', [BigInt(i) * SLOTS_PER_CALL, SLOTS_PER_CALL]))),
    blocks: {
      erc20: () => holders.map((h, i) => h.tx(c.token, callData('Token', 'transfer', [next(i), 1n]), { gas: 35_000n })),
      mix,
      loop: () => [holders[0].tx(undefined, LOOP_INIT_CODE, { gas: 29_000_000n })],
    },
  };
}
