/**
 * Signature checks of block headers and commit certificates: each certificate's precommits are
 * verified in one native batch call instead of one call per signature. Validators' public keys are
 * decoded from hex once.
 */
import { crypto } from '../crypto/index.js';
import { fromHex } from '../util/hex.js';

export interface SignatureCheck {
  sig: Uint8Array;
  digest: Uint8Array;
  pub: Uint8Array;
  /** What the signature is for (the error message names it). */
  what: string;
}

/** The first check whose signature does not verify (in the given order), or null. */
export function firstFailing(checks: readonly SignatureCheck[]): SignatureCheck | null {
  if (checks.length === 0) return null;
  if (checks.length === 1) return crypto().verify(checks[0].sig, checks[0].digest, checks[0].pub) ? null : checks[0];
  const ok = crypto().verifyBatch(
    checks.map((c) => c.sig),
    checks.map((c) => c.digest),
    checks.map((c) => c.pub),
  );
  const bad = ok.indexOf(false);
  return bad < 0 ? null : checks[bad];
}

const keys = new Map<string, Uint8Array>();

/** A validator's public key bytes (hex decoded once per key). */
export function publicKeyBytes(hex: string): Uint8Array {
  let k = keys.get(hex);
  if (!k) {
    if (keys.size > 10_000) keys.clear();
    k = fromHex(hex);
    keys.set(hex, k);
  }
  return k;
}
