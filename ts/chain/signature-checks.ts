/**
 * Signature checks of block headers and commit certificates: each certificate's precommits are
 * verified in one native batch call instead of one call per signature. Validators' public keys are
 * decoded from hex once.
 */
import { crypto } from '../crypto/index.js';
import { fromHex } from '../util/index.js';

export interface SignatureCheck {
  sig: Uint8Array;
  digest: Uint8Array;
  pub: Uint8Array;
  /** What the signature is for (the error message names it). */
  what: string;
}

/**
 * Signatures already verified ahead, in one batch across many blocks (sync verifies a whole run of
 * blocks' header and certificate signatures at once): signature and digest -> the public key they
 * verified under. A check is skipped only for exactly that signature, digest and key, so what a rule
 * asks is still answered; a miss (or an entry dropped to bound memory) just verifies again.
 */
const verifiedAhead = new Map<string, Uint8Array>();
const MAX_VERIFIED_AHEAD = 100_000;

const memoKey = (c: { sig: Uint8Array; digest: Uint8Array }): string =>
  Buffer.from(c.sig.buffer, c.sig.byteOffset, c.sig.byteLength).toString('latin1') +
  Buffer.from(c.digest.buffer, c.digest.byteOffset, c.digest.byteLength).toString('latin1');

/** Whether this exact check was verified ahead (an entry answers once: each signature is checked once at import). */
function knownValid(c: SignatureCheck): boolean {
  if (verifiedAhead.size === 0) return false;
  const key = memoKey(c);
  const pub = verifiedAhead.get(key);
  if (pub === undefined || Buffer.compare(pub, c.pub) !== 0) return false;
  verifiedAhead.delete(key);
  return true;
}

/** Remember checks the caller verified (valid) in a batch of its own, for the rules that will ask for them. */
export function rememberVerified(checks: readonly SignatureCheck[]): void {
  if (verifiedAhead.size + checks.length > MAX_VERIFIED_AHEAD) verifiedAhead.clear();
  for (const c of checks) verifiedAhead.set(memoKey(c), c.pub);
}

/** Forget the signatures verified ahead (a catch-up pass that ended keeps nothing for later). */
export function forgetVerifiedAhead(): void {
  verifiedAhead.clear();
}

/** The first check whose signature does not verify (in the given order), or null. */
export function firstFailing(all: readonly SignatureCheck[]): SignatureCheck | null {
  const checks = all.filter((c) => !knownValid(c));
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
