/**
 * How much of a validator set this node trusts signed a block it cannot check with the block rules (it lacks
 * the state the block builds on): a peer's claimed head (proven-heads.ts) and a state sync snapshot block
 * (snapshot-trust.ts). Tendermint's light client counts the same way when it skips ahead: only signers of the
 * trusted set count, each once, whatever else the certificate holds.
 */
import { type ActiveValidator, type Block, PRECOMMIT, decodeJustification, publicKeyBytes, voteDigest } from '../chain/index.js';
import { crypto } from '../crypto/index.js';
import { isLowS } from '../ledger/index.js';
import { fromHex } from '../util/index.js';

/** A low-S compact signature of `digest` by the key `pubHex`. */
export function signatureVerifies(sigHex: string, digest: Uint8Array, pubHex: string): boolean {
  if (!/^[0-9a-f]{128}$/.test(sigHex)) return false;
  const sig = fromHex(sigHex);
  return isLowS(sig) && crypto().verify(sig, digest, publicKeyBytes(pubHex));
}

/** What the trusted set signed of a block: its power and who, or why the certificates are forged. */
export type CertifiedPower = { power: bigint; signers: string[] } | { forged: string };

/**
 * The voting power of `trusted`'s validators whose precommits for block (`height`, `hash`) verify, over every
 * certificate given (a block's justification and the next block's last_commit may hold different quorums, each
 * of its own round), each validator counted once. Signers outside `trusted` are skipped: no one's fault when the
 * set has moved since. A certificate that does not decode, or a precommit of a trusted validator that does not
 * verify, is forged (the peer that served it lied).
 */
export function certifiedPower(
  chainId: number,
  height: number,
  hash: string,
  certificates: readonly Uint8Array[],
  trusted: readonly ActiveValidator[],
): CertifiedPower {
  const byAddress = new Map(trusted.map((v) => [v.address, v]));
  const signers = new Set<string>();
  let power = 0n;
  for (const bytes of certificates) {
    let cert: ReturnType<typeof decodeJustification>;
    try {
      cert = decodeJustification(bytes);
    } catch (err) {
      return { forged: `undecodable certificate: ${(err as Error).message}` };
    }
    const digest = voteDigest(chainId, { type: PRECOMMIT, height, round: cert.round, block_hash: hash });
    for (const p of cert.precommits) {
      const v = byAddress.get(p.validator);
      if (!v || signers.has(v.address)) continue;
      if (!signatureVerifies(p.signature, digest, v.public_key))
        return { forged: `the precommit of ${v.address} in its certificate does not verify` };
      signers.add(v.address);
      power += v.power;
    }
  }
  return { power, signers: [...signers] };
}

/** For a block without a certificate: its proposer is a validator of `set` and signed its hash. */
export function proposerSigned(b: Block, set: readonly ActiveValidator[]): 'signed' | 'unknown proposer' | 'forged' {
  const proposer = set.find((v) => v.address === b.validator);
  if (!proposer) return 'unknown proposer';
  return signatureVerifies(b.signature, fromHex(b.hash), proposer.public_key) ? 'signed' : 'forged';
}
