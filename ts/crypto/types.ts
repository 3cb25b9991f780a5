/**
 * The contract both crypto backends (native addon and JS twin) implement.
 * Every function is synchronous and pure; inputs are validated by callers
 * (lengths below are preconditions, a backend may throw on violations).
 */
export interface CryptoBackend {
  /** "native" (Rust addon) or "js" (@noble twin). Exposed as a log line and a metric label. */
  readonly name: 'native' | 'js';
  sha256(data: Uint8Array): Uint8Array;
  keccak256(data: Uint8Array): Uint8Array;
  /** sha256 of each item; lets the native side hash a whole trie level in one call. */
  sha256Many(items: readonly Uint8Array[]): Uint8Array[];
  /**
   * sha256 of consecutive segments of one buffer: segment i is data[ends[i-1] .. ends[i]] (ends[-1] = 0).
   * Returns all digests back to back (n * 32 bytes). The trie hashes a whole level in one call.
   */
  sha256Segments(data: Uint8Array, ends: Uint32Array): Uint8Array;
  /**
   * secp256k1 ECDSA verification of a 64-byte compact signature (r||s) over a 32-byte digest
   * with a 65-byte uncompressed public key (0x04 prefix). High-S signatures are accepted
   * (normalised first): the txid does not depend on the signature, so malleability is harmless.
   */
  verify(sig64: Uint8Array, digest32: Uint8Array, pubkey65: Uint8Array): boolean;
  /** Batch form of verify: one result per index, computed in parallel where the backend can. */
  verifyBatch(sigs: readonly Uint8Array[], digests: readonly Uint8Array[], pubkeys: readonly Uint8Array[]): boolean[];
  /**
   * Recover the 65-byte uncompressed public key from a compact signature and recovery id (0..3).
   * Returns null when recovery fails.
   */
  recover(sig64: Uint8Array, recid: number, digest32: Uint8Array): Uint8Array | null;
  /**
   * secp256k1 ECDSA signature of a 32-byte digest with a 32-byte private key: r || s (low-S) || recovery id
   * (0/1), 65 bytes. The nonce is RFC 6979's, with `entropy` (32 bytes) as its additional data when given
   * (hedged signing); without it both backends give the same bytes. Throws on an invalid key.
   */
  sign(digest32: Uint8Array, privateKey32: Uint8Array, entropy32?: Uint8Array): Uint8Array;
  /**
   * Merkle root over 32-byte leaves: pairwise sha256(left||right), an odd node is paired with
   * itself (Bitcoin style). Empty list -> 32 zero bytes; one leaf -> that leaf.
   */
  merkleRoot(leaves: readonly Uint8Array[]): Uint8Array;
  /** Ethereum 2048-bit (256-byte) bloom: set the 3 bits derived from keccak256(item). Mutates bloom. */
  bloomAdd(bloom256: Uint8Array, item: Uint8Array): void;
  /** True when all 3 bits of keccak256(item) are set in the bloom. */
  bloomTest(bloom256: Uint8Array, item: Uint8Array): boolean;
  /**
   * Scan many blooms for a query: returns the indexes of blooms for which, for EVERY group,
   * at least one item of that group passes bloomTest. (Groups model eth_getLogs: address OR-list,
   * then each topic slot's OR-list; an empty group list matches everything.)
   */
  bloomScan(blooms: readonly Uint8Array[], groups: readonly (readonly Uint8Array[])[]): number[];
}
