/**
 * The verification service: fetch the deployed code, compile the sources on a worker, compare as Sourcify
 * does, find the creation transaction for the constructor arguments, store the result. One instance per
 * node (its own chain, in-process) or per standalone service (one chain per node it talks to).
 */
import { toChecksumAddress } from '@ethereumjs/util';
import { toHex } from '../util/index.js';
import type { CompilePool } from './compile-pool.js';
import type { CompiledContract } from './compile-task.js';
import { resolveCompiler } from './compiler.js';
import { decodeConstructorArguments } from './constructor-args.js';
import { InvalidVerifyRequestError, NoCodeError, UnsupportedChainError } from './errors.js';
import { VerificationJobs } from './jobs.js';
import type { ChainReader, CreationTransaction, VerificationRecord } from './interface.js';
import { type CreationMatch, matchCreation, matchRuntime } from './match.js';
import { type ContractToVerify, storedSettings } from './metadata.js';
import type { StoreOutcome, VerificationStore } from './store.js';

/** The chains this service verifies (spec: 7119 mainnet, 7120 testnet; nothing else). */
export const VERIFY_CHAINS: readonly number[] = [7119, 7120];
export const CHAIN_NAMES: Readonly<Record<number, string>> = { 7119: 'Native Mainnet', 7120: 'Native Testnet' };

export interface VerificationServiceOptions {
  /** A reader per chain served: the node's own chain, or one per node of the standalone service. */
  chains: ReadonlyMap<number, ChainReader>;
  store: VerificationStore;
  compiler: CompilePool;
  /** Directory of soljson files for compiler versions other than the bundled one. */
  solcDir?: string;
  /** Base of the file URLs of `/files/tree` answers (e.g. https://verify.example.org); path-only when unset. */
  publicUrl?: string;
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const TX_HASH_RE = /^0x[0-9a-fA-F]{64}$/;

/** A 0x address from a request, lowercase; 400 otherwise. */
export function addressParam(raw: unknown): string {
  if (typeof raw !== 'string' || !ADDRESS_RE.test(raw)) throw new InvalidVerifyRequestError(`Invalid address: ${String(raw)}`);
  return raw.toLowerCase();
}

export const checksum = (address: string): string => toChecksumAddress(address);

/** The outcome of one verification: the record it produced and what the store did with it. */
export interface VerifyOutcome {
  record: VerificationRecord;
  stored: StoreOutcome;
}

export class VerificationService {
  readonly store: VerificationStore;
  readonly publicUrl: string;
  /** API v2 jobs (in memory). */
  readonly jobs = new VerificationJobs();
  /** Records being removed after a rollback (forgetRemoved). */
  private forgetting: Promise<void> = Promise.resolve();

  constructor(private readonly opts: VerificationServiceOptions) {
    this.store = opts.store;
    this.publicUrl = (opts.publicUrl ?? '').replace(/\/+$/, '');
  }

  /** Chains this instance verifies (a subset of VERIFY_CHAINS). */
  servedChains(): number[] {
    return [...this.opts.chains.keys()].sort((a, b) => a - b);
  }

  /** A chain id from a request, checked: only 7119 and 7120, and only those this instance serves (400 otherwise). */
  chainParam(raw: unknown): number {
    const text = typeof raw === 'number' ? String(raw) : raw;
    if (typeof text !== 'string' || !/^\d{1,10}$/.test(text)) throw new UnsupportedChainError(String(raw), this.servedChains());
    const id = Number(text);
    if (!VERIFY_CHAINS.includes(id) || !this.opts.chains.has(id)) throw new UnsupportedChainError(text, this.servedChains());
    return id;
  }

  private reader(chainId: number): ChainReader {
    const r = this.opts.chains.get(chainId);
    if (!r) throw new UnsupportedChainError(String(chainId), this.servedChains());
    return r;
  }

  /** Compilations running or queued, and ended so far (for metrics and tests). */
  compilations(): { inFlight: number; completed: number } {
    return { inFlight: this.opts.compiler.inFlight, completed: this.opts.compiler.completed };
  }

  lookup(chainId: number, address: string): Promise<VerificationRecord | null> {
    return this.forgetting.then(() => this.store.get(chainId, address));
  }

  /**
   * A rollback (the dev chain's evm_revert, anvil_reset) removed the blocks above `height` and changed the code
   * at `addresses`: a record of one of them goes when its contract was deployed in a removed block (or its
   * deployment is unknown), since the code it was verified against is gone. Lookups made later wait for it.
   */
  forgetRemoved(chainId: number, height: number, addresses: readonly string[]): Promise<void> {
    const removed = (r: VerificationRecord) => r.deployment.blockNumber === null || r.deployment.blockNumber > height;
    this.forgetting = this.forgetting.then(() => this.store.forget(chainId, addresses, removed)).catch(() => undefined);
    return this.forgetting;
  }

  /**
   * Verify `contract` against the code at `address` and store the result when it is better than what the
   * address has. Failures throw VerifyErrors (no code, compiler errors, bytecode mismatch with its offset).
   */
  async verify(chainId: number, address: string, contract: ContractToVerify, creationTxHash?: string): Promise<VerifyOutcome> {
    const reader = this.reader(chainId);
    if (creationTxHash !== undefined && !TX_HASH_RE.test(creationTxHash))
      throw new InvalidVerifyRequestError(`invalid creation transaction hash ${creationTxHash}: expected 0x + 64 hex`);
    const compiler = resolveCompiler(contract.compilerVersion, this.opts.solcDir);
    const code = await reader.getCode(address);
    if (code.length === 0) throw new NoCodeError(chainId, checksum(address));
    const compiled = await this.opts.compiler.compile({ compiler, input: contract.input, target: contract.target });
    const runtime = matchRuntime(compiled, toHex(code));
    const creationTx = await this.creationTransaction(reader, address, creationTxHash);
    const creation = creationTx ? matchCreation(compiled, toHex(creationTx.input)) : null;
    const decoded = creation ? await decodeConstructorArguments(compiled.abi, creation.constructorArguments) : null;
    // A tail that is not the constructor's arguments means the creation code did not really match.
    const creationMatch = creation && decoded ? creation : null;
    const record = buildRecord({ chainId, address, contract, compiled, runtime, creationTx, creation: creationMatch, decoded });
    return { record, stored: await this.store.putIfBetter(record) };
  }

  /** The given creation transaction (400 when unknown), else the one the chain's index names, else null. */
  private async creationTransaction(reader: ChainReader, address: string, given?: string): Promise<CreationTransaction | null> {
    if (given !== undefined) {
      const tx = await reader.getTransaction(given);
      if (!tx) throw new InvalidVerifyRequestError(`creation transaction ${given} was not found on the chain`);
      // Another contract's creation could carry the same code: its arguments are not this contract's.
      if (tx.contractAddress !== null && tx.contractAddress !== address)
        throw new InvalidVerifyRequestError(
          `transaction ${given} created ${checksum(tx.contractAddress)}, not ${checksum(address)}`,
        );
      return tx;
    }
    const hash = await reader.findCreationTx(address);
    if (!hash) return null;
    const tx = await reader.getTransaction(hash);
    return tx && tx.contractAddress === address ? tx : null;
  }

  async close(): Promise<void> {
    await this.opts.compiler.close();
  }
}

interface RecordParts {
  chainId: number;
  address: string;
  contract: ContractToVerify;
  compiled: CompiledContract;
  runtime: ReturnType<typeof matchRuntime>;
  creationTx: CreationTransaction | null;
  creation: CreationMatch | null;
  decoded: { values: unknown[] } | null;
}

/** The stored record, with the files laid out as Sourcify's repository has them. */
function buildRecord(p: RecordParts): VerificationRecord {
  const { contract, compiled, runtime, creation, creationTx } = p;
  const files: Record<string, string> = { 'metadata.json': contract.metadataText ?? compiled.metadata };
  for (const [path, src] of Object.entries(contract.input.sources)) files[`sources/${path}`] = src.content;
  const libraryMap = { ...(creation?.libraryMap ?? {}), ...runtime.libraryMap };
  const args = creation && creation.constructorArguments !== '0x' ? creation.constructorArguments : null;
  if (args) files['constructor-args.txt'] = args;
  if (creationTx) files['creator-tx-hash.txt'] = creationTx.hash;
  if (Object.keys(libraryMap).length) files['library-map.json'] = JSON.stringify(libraryMap);
  if (Object.keys(compiled.runtime.immutableReferences).length)
    files['immutable-references.json'] = JSON.stringify(compiled.runtime.immutableReferences);
  return {
    chainId: p.chainId,
    address: p.address,
    match: runtime.match,
    runtimeMatch: runtime.match,
    creationMatch: creation?.match ?? null,
    language: contract.input.language,
    compilerVersion: contract.compilerVersion,
    compilerSettings: storedSettings(contract.input),
    contractName: contract.target.name,
    contractPath: contract.target.path,
    abi: compiled.abi,
    files,
    constructorArguments: creation ? creation.constructorArguments : null,
    constructorArgumentsDecoded: p.decoded?.values ?? null,
    libraryMap,
    immutables: runtime.immutables,
    deployment: {
      transactionHash: creationTx?.hash ?? null,
      blockNumber: creationTx?.blockNumber ?? null,
      transactionIndex: creationTx?.transactionIndex ?? null,
      deployer: creationTx?.from ?? null,
    },
    verifiedAt: new Date().toISOString(),
  };
}
