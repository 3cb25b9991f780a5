/**
 * Verified contracts for the node's other interfaces (the explorer's badge, source view and the decoding of
 * calls and logs with a verified ABI), the creation lookup behind native_getContractCreation, and the
 * verification service's view of this node's chain (in-process, no JSON-RPC).
 */
import { chainCommon, isEvmTransaction, typedTransactionOf } from '../execution/index.js';
import { addressFromCodeKey } from '../state/index.js';
import { normHash, to0x } from '../util/index.js';
import type { ChainReader, CreationTransaction, MatchKind, VerificationRecord } from '../verify/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { codeAt } from './evm-queries.js';

/** What the explorer shows of a verified contract. */
export interface VerifiedContractInfo {
  /** Lowercase 0x address. */
  address: string;
  chainId: number;
  /** `perfect` (full badge) or `partial` (amber badge). */
  match: MatchKind;
  /** Match of the creation transaction's code (null when unknown). */
  creationMatch: MatchKind | null;
  contractName: string;
  /** Source path of the contract, e.g. contracts/Token.sol. */
  contractPath: string;
  compilerVersion: string;
  compilerSettings: Record<string, unknown>;
  /** The contract's ABI: decodes its calls, return values and logs. */
  abi: unknown[];
  /** Source files by path (without metadata.json and the other repository files). */
  sources: Record<string, string>;
  constructorArguments: string | null;
  constructorArgumentsDecoded: unknown[] | null;
  verifiedAt: string;
}

/**
 * The verified contract at `address` on this node's chain, or null when it is not verified (or the node
 * runs without the verification service). Consumer: the explorer.
 */
export async function getVerifiedContract(ctx: NodeContext, address: string): Promise<VerifiedContractInfo | null> {
  const svc = ctx.verification;
  if (!svc) return null;
  const r = await svc.lookup(ctx.chain.params.chainId, address.toLowerCase());
  return r ? verifiedInfo(r) : null;
}

function verifiedInfo(r: VerificationRecord): VerifiedContractInfo {
  const sources: Record<string, string> = {};
  for (const [file, content] of Object.entries(r.files)) if (file.startsWith('sources/')) sources[file.slice(8)] = content;
  return {
    address: r.address,
    chainId: r.chainId,
    match: r.match,
    creationMatch: r.creationMatch,
    contractName: r.contractName,
    contractPath: r.contractPath,
    compilerVersion: r.compilerVersion,
    compilerSettings: r.compilerSettings,
    abi: r.abi,
    sources,
    constructorArguments: r.constructorArguments,
    constructorArgumentsDecoded: r.constructorArgumentsDecoded,
    verifiedAt: r.verifiedAt,
  };
}

/**
 * Keep the node's verified contracts true to its chain across rollbacks (the dev chain's evm_revert and
 * anvil_reset): a contract deployed in a removed block is gone, and so is its record. Returns the detach function.
 */
export function followRollbacks(ctx: NodeContext): () => void {
  const onRollback = (height: number, keys: ReadonlySet<string>) => {
    const addresses: string[] = [];
    for (const k of keys) {
      const a = addressFromCodeKey(k);
      if (a) addresses.push(a);
    }
    if (addresses.length > 0) void ctx.verification?.forgetRemoved(ctx.chain.params.chainId, height, addresses);
  };
  ctx.chain.on('rollback', onRollback);
  return () => ctx.chain.off('rollback', onRollback);
}

/** Where a contract was created: its creation transaction (one without recipient). */
export interface ContractCreation {
  transactionHash: string;
  blockNumber: number;
  transactionIndex: number;
  creator: string;
}

/** The transaction that created `address`, or null (unknown, or created by another contract). */
export async function contractCreation(ctx: ChainContext, address: string): Promise<ContractCreation | null> {
  const loc = await ctx.chain.blocks.contractCreation(address.toLowerCase());
  if (!loc) return null;
  const block = await ctx.chain.blocks.getBlock(loc.height);
  const tx = block?.transactions[loc.index];
  if (!tx) return null;
  return { transactionHash: `0x${tx.txid}`, blockNumber: loc.height, transactionIndex: loc.index, creator: tx.from_address };
}

/** The verification service's reader of this node's chain: state, indexes and receipts, in-process. */
export function nodeChainReader(ctx: ChainContext): ChainReader {
  const { chain } = ctx;
  return {
    chainId: async () => chain.params.chainId,
    getCode: async (address) => codeAt(ctx, address),
    findCreationTx: async (address) => (await contractCreation(ctx, address))?.transactionHash ?? null,
    getTransaction: async (hash): Promise<CreationTransaction | null> => {
      const loc = await chain.blocks.txLocation(normHash(hash));
      if (!loc) return null;
      const [block, receipts] = await Promise.all([chain.blocks.getBlock(loc.height), chain.blocks.receipts(loc.height)]);
      const tx = block?.transactions[loc.index];
      if (!tx) return null;
      const receipt = receipts?.[loc.index];
      const input = isEvmTransaction(tx)
        ? typedTransactionOf(tx, chainCommon(chain.params.chainId, chain.params.evmHardfork)).data
        : new Uint8Array(0);
      return {
        hash: `0x${tx.txid}`,
        input,
        from: tx.from_address,
        blockNumber: loc.height,
        transactionIndex: loc.index,
        contractAddress: receipt?.contractAddress ? to0x(receipt.contractAddress) : null,
      };
    },
  };
}
