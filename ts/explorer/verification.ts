/**
 * Contract verification as the explorer shows it: the match status (perfect / partial), the ABI that
 * decodes calls and logs, and the verified source files. The verification service (issue 16) provides it;
 * until it is part of this node no contract is verified and pages say "not verified".
 */
import type { NodeContext } from '../services/index.js';

export interface VerifiedContract {
  status: 'perfect' | 'partial';
  /** Contract name and compiler, when the metadata names them. */
  name: string | null;
  compiler: string | null;
  /** ABI entries (JSON ABI). */
  abi: readonly unknown[];
  files: { path: string; content: string }[];
}

/** The verification of the contract at address, or null when it is not verified. */
export async function verifiedContract(_ctx: NodeContext, _address: string): Promise<VerifiedContract | null> {
  return null;
}
