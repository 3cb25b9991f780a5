/**
 * EVM fixtures shared by the EVM bench and the log-index / REST tests: the contracts of bench/contracts
 * compiled with the bundled solc (offline), signed EIP-1559 transactions in the node's stored form, and a
 * dev chain on RocksDB driven by Chain.propose/commit.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { Interface, type InterfaceAbi } from 'ethers';
import solc from 'solc';
import { Chain } from '../ts/chain/chain.js';
import { PRESET_ACTIVATION } from '../ts/chain/params.js';
import type { ChainParams } from '../ts/chain/params.js';
import {
  BASE_FEE_PER_GAS,
  chainCommon,
  decodeRawTransaction,
  evmToSignedTransaction,
  rememberTypedTransaction,
} from '../ts/execution/index.js';
import type { KeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { BASE_PER_COIN } from '../ts/modules/kit/units.js';
import { type KvStore, openRocksStore } from '../ts/storage/index.js';
import { fromHex, toHex } from '../ts/util/hex.js';

export const CHAIN_ID = 7120;
export const HARDFORK = 'prague';
const CONTRACTS_DIR = fileURLToPath(new URL('../../bench/contracts/', import.meta.url));

export interface Compiled {
  abi: InterfaceAbi;
  iface: Interface;
  /** Creation code, 0x-hex. */
  bytecode: string;
  /** Runtime code as stored in state, 0x-hex. */
  deployedBytecode: string;
}

let compiled: Map<string, Compiled> | undefined;

/** Every contract of bench/contracts/*.sol, compiled once per process (solc 0.8.37, evmVersion prague). */
export function contract(name: string): Compiled {
  if (!compiled) {
    const sources: Record<string, { content: string }> = {};
    for (const f of readdirSync(CONTRACTS_DIR).filter((f) => f.endsWith('.sol'))) {
      sources[f] = { content: readFileSync(`${CONTRACTS_DIR}${f}`, 'utf8') };
    }
    const input = {
      language: 'Solidity',
      sources,
      settings: {
        evmVersion: HARDFORK,
        optimizer: { enabled: true, runs: 200 },
        outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
      },
    };
    const out = JSON.parse(solc.compile(JSON.stringify(input)));
    const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
    if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
    compiled = new Map();
    for (const file of Object.values(out.contracts) as Record<string, any>[]) {
      for (const [n, c] of Object.entries(file)) {
        compiled.set(n, {
          abi: c.abi,
          iface: new Interface(c.abi),
          bytecode: `0x${c.evm.bytecode.object}`,
          deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        });
      }
    }
  }
  const c = compiled.get(name);
  if (!c) throw new Error(`no contract ${name} in bench/contracts`);
  return c;
}

/** Creation data: creation code followed by the ABI-encoded constructor arguments. */
export const deployData = (name: string, args: unknown[] = []): Uint8Array => {
  const c = contract(name);
  return fromHex(c.bytecode + c.iface.encodeDeploy(args).slice(2));
};

/** Calldata of a contract function. */
export const callData = (name: string, fn: string, args: unknown[] = []): Uint8Array =>
  fromHex(contract(name).iface.encodeFunctionData(fn, args));

/** An externally owned account that signs EIP-1559 transactions with consecutive nonces. */
export class EvmSender {
  nonce = 0n;
  constructor(readonly key: KeyPair) {}

  get address(): string {
    return this.key.address;
  }

  /** Signed raw transaction (to undefined: contract creation). */
  raw(to: string | undefined, data: Uint8Array = new Uint8Array(0), opts: { gas?: bigint; value?: bigint } = {}): Uint8Array {
    const tx = createFeeMarket1559Tx(
      {
        chainId: BigInt(CHAIN_ID),
        nonce: this.nonce++,
        maxFeePerGas: 2n * BASE_FEE_PER_GAS,
        maxPriorityFeePerGas: 0n,
        gasLimit: opts.gas ?? (to === undefined ? 3_000_000n : 200_000n),
        to: to as `0x${string}` | undefined,
        value: opts.value ?? 0n,
        data,
      },
      { common: chainCommon(CHAIN_ID, HARDFORK) },
    ).sign(this.key.privateKey);
    return tx.serialize();
  }

  /** The same transaction in the node's stored form, as admission builds it from the raw bytes. */
  tx(to: string | undefined, data?: Uint8Array, opts?: { gas?: bigint; value?: bigint }): SignedTransaction {
    return storedEvmTransaction(this.raw(to, data, opts));
  }
}

/** Raw signed transaction -> SignedTransaction, as admission builds it (sender recovered, decoded form cached). */
export function storedEvmTransaction(raw: Uint8Array, timestamp = 1_700_000_000): SignedTransaction {
  const typed = decodeRawTransaction(raw, chainCommon(CHAIN_ID, HARDFORK));
  const stored = evmToSignedTransaction(typed, raw, timestamp);
  rememberTypedTransaction(stored, typed);
  return stored;
}

export interface DevChain {
  chain: Chain;
  db: KvStore;
  params: ChainParams;
  validator: KeyPair;
  close(): Promise<void>;
}

/** Dev chain params: one validator, every activation at 0, funded accounts. */
export function devParams(validator: KeyPair, funded: readonly string[], balanceBase = 1000n * BASE_PER_COIN): ChainParams {
  return {
    network: 'dev',
    chainId: CHAIN_ID,
    genesisTimestamp: 1_700_000_000,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: 'v' }],
    alloc: new Map(funded.map((a) => [a, balanceBase])),
    evmHardfork: HARDFORK,
    epochLength: 3600,
  };
}

/** Open (or reopen) a chain on RocksDB in dir. */
export async function openChain(dir: string, params: ChainParams, validator: KeyPair, windowSize: number): Promise<DevChain> {
  const db = await openRocksStore(dir);
  const chain = new Chain(params, db, windowSize);
  await chain.open();
  return { chain, db, params, validator, close: () => db.close() };
}

/** Propose and commit one block with txs; throws when any transaction was dropped. */
export async function produce(dev: DevChain, txs: readonly SignedTransaction[]) {
  // Never behind the clock: transactions are dated now and may be at most 300 s ahead of their block.
  const p = await dev.chain.propose(txs, dev.validator, Math.max(dev.chain.head.timestamp, Math.floor(Date.now() / 1000)));
  if (p.result.dropped.length) throw new Error(`dropped: ${p.result.dropped.map((d) => d.reason).join(', ')}`);
  await dev.chain.commit(p);
  return p;
}
