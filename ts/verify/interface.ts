/** The contracts of the verification domain: what it reads of a chain and what it stores. */

/** Sourcify's match levels: `perfect` (runtime code and its metadata hash identical), `partial` (only the CBOR auxdata differs). */
export type MatchKind = 'perfect' | 'partial';

/** The transaction that created a contract, as far as the verifier needs it. */
export interface CreationTransaction {
  hash: string;
  /** The transaction's input: creation code followed by the constructor arguments. */
  input: Uint8Array;
  from: string;
  blockNumber: number;
  transactionIndex: number;
  /** The receipt's contractAddress (lowercase 0x hex), null when the transaction created no contract itself. */
  contractAddress: string | null;
}

/**
 * What the verifier reads of a chain. Two implementations: the node's own state and indexes
 * (services/verified-contracts.ts, in-process) and JSON-RPC to a node (rpc-reader.ts, the standalone service).
 */
export interface ChainReader {
  /** The chain's id (7119 or 7120 for a chain this service verifies). */
  chainId(): Promise<number>;
  /** Runtime code at address now (empty when none). */
  getCode(address: string): Promise<Uint8Array>;
  /** Hash of the transaction that created address (top-level creations), or null when unknown. */
  findCreationTx(address: string): Promise<string | null>;
  /** A mined transaction with the fields above, or null. */
  getTransaction(hash: string): Promise<CreationTransaction | null>;
}

/** One verified contract: what the service stores (RocksDB, store.ts) and serves. */
export interface VerificationRecord {
  chainId: number;
  /** Lowercase 0x hex. */
  address: string;
  /** The runtime match (Sourcify v1 `status`). */
  match: MatchKind;
  runtimeMatch: MatchKind;
  /** Match of the creation transaction's code, null when the creation transaction is unknown or did not match. */
  creationMatch: MatchKind | null;
  language: string;
  /** Full compiler version, e.g. 0.8.37+commit.f401782d. */
  compilerVersion: string;
  /** The compiler settings used (standard JSON `settings`, outputSelection left out). */
  compilerSettings: Record<string, unknown>;
  contractName: string;
  /** Source path of the contract, e.g. contracts/Token.sol. */
  contractPath: string;
  abi: unknown[];
  /** Files as Sourcify's repository lays them out: metadata.json, sources/<path>, constructor-args.txt, ... */
  files: Record<string, string>;
  /** ABI-encoded constructor arguments (0x hex) from the creation transaction's input tail; null when unknown. */
  constructorArguments: string | null;
  /** The same, decoded with the constructor's ABI (bigints as decimal strings). */
  constructorArgumentsDecoded: unknown[] | null;
  /** Library placeholders or names to the addresses linked into the deployed code. */
  libraryMap: Record<string, string>;
  /** Immutable values read from the deployed code, by AST id. */
  immutables: Record<string, string>;
  deployment: {
    transactionHash: string | null;
    blockNumber: number | null;
    transactionIndex: number | null;
    deployer: string | null;
  };
  /** ISO time of storage. */
  verifiedAt: string;
}
