/**
 * The EVM hardfork of a chain (docs/evm.md, "Hardfork"): a genesis parameter, `evm_hardfork`, either one name
 * from genesis on or a schedule of names by activation height, as the other forks of `activation`. The node
 * runs London and later (its blocks carry a base fee); a genesis asking for anything else is refused at start.
 */
import { BLOCK_GAS_LIMIT, chainCommon, transactionGasCapOf } from '../execution/index.js';

/** Hardforks the node's EVM runs, oldest first (@ethereumjs names). */
export const EVM_HARDFORKS = ['london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka'] as const;
export type EvmHardfork = (typeof EVM_HARDFORKS)[number];

/** What a genesis file without `evm_hardfork` means: every chain made before the field existed ran prague. */
export const LEGACY_EVM_HARDFORK: EvmHardfork = 'prague';
/** The hardfork of chains the node creates now (--dev, `testnet` generated networks): Ethereum mainnet's. */
export const NEW_CHAIN_EVM_HARDFORK: EvmHardfork = 'osaka';

/** A change of hardfork at an activation height (after genesis). */
export interface HardforkActivation {
  height: number;
  hardfork: string;
}

/** The parameters a hardfork lookup reads (ChainParams has them). */
export interface EvmHardforkParams {
  evmHardfork: string;
  evmHardforkSchedule?: readonly HardforkActivation[];
}

const ALLOWED = `allowed: ${EVM_HARDFORKS.join(', ')}`;

/** The name when the node can run it, else an error naming the allowed values. */
export function checkEvmHardfork(name: unknown, where: string): EvmHardfork {
  if (typeof name === 'string' && (EVM_HARDFORKS as readonly string[]).includes(name)) return name as EvmHardfork;
  throw new Error(`${where} ${JSON.stringify(name)} is not an EVM hardfork this node runs (${ALLOWED})`);
}

/**
 * The genesis file's `evm_hardfork`: absent (prague), a name, or `{ "<name>": height, ... }` starting at height
 * 0, each later hardfork at a higher height. Throws with the allowed values on anything else.
 */
export function parseEvmHardfork(raw: unknown): EvmHardforkParams {
  if (raw === undefined) return { evmHardfork: LEGACY_EVM_HARDFORK };
  if (typeof raw === 'string') return { evmHardfork: checkEvmHardfork(raw, 'genesis: evm_hardfork') };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error(`genesis: evm_hardfork must be a hardfork name or { name: height } (${ALLOWED})`);
  }
  const entries = Object.entries(raw as Record<string, unknown>).map(([name, h]) => {
    const hardfork = checkEvmHardfork(name, 'genesis: evm_hardfork');
    const height = typeof h === 'bigint' ? Number(h) : h;
    if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 0) {
      throw new Error(`genesis: evm_hardfork ${name} needs an activation height (a non-negative integer)`);
    }
    return { height, hardfork };
  });
  entries.sort((a, b) => a.height - b.height);
  if (entries[0]?.height !== 0) throw new Error('genesis: evm_hardfork schedule must name the hardfork at height 0');
  for (let i = 1; i < entries.length; i++) {
    const [prev, next] = [entries[i - 1], entries[i]];
    if (
      next.height === prev.height ||
      EVM_HARDFORKS.indexOf(next.hardfork as EvmHardfork) <= EVM_HARDFORKS.indexOf(prev.hardfork as EvmHardfork)
    ) {
      throw new Error(
        `genesis: evm_hardfork schedule must move forward: ${prev.hardfork} at ${prev.height}, ${next.hardfork} at ${next.height}`,
      );
    }
  }
  const [first, ...later] = entries;
  return later.length ? { evmHardfork: first.hardfork, evmHardforkSchedule: later } : { evmHardfork: first.hardfork };
}

/** The genesis file's form of these parameters (a name when nothing is scheduled: files written before stay as they were). */
export function evmHardforkJson(p: EvmHardforkParams): string | Record<string, number> {
  if (!p.evmHardforkSchedule?.length) return p.evmHardfork;
  return Object.fromEntries([[p.evmHardfork, 0], ...p.evmHardforkSchedule.map((a) => [a.hardfork, a.height])]);
}

/** The hardfork blocks at `height` run (the last activation at or below it). */
export function evmHardforkAt(p: EvmHardforkParams, height: number): string {
  let fork = p.evmHardfork;
  for (const a of p.evmHardforkSchedule ?? []) {
    if (a.height > height) break;
    fork = a.hardfork;
  }
  return fork;
}

/** The most gas one transaction may have at `height`: EIP-7825's cap from osaka on, else unbounded (the block's limit rules). */
export function transactionGasCap(p: EvmHardforkParams & { chainId: number }, height: number): bigint {
  const common = chainCommon(p.chainId, evmHardforkAt(p, height));
  return transactionGasCapOf(common) ?? BigInt(Number.MAX_SAFE_INTEGER);
}

/** A chain's block gas limit: 30M, or what a dev chain was started with (`--gas-limit`). */
export const blockGasLimitOf = (p: { blockGasLimit?: bigint }): bigint => p.blockGasLimit ?? BLOCK_GAS_LIMIT;
