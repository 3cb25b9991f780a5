/**
 * Contract verification as the explorer shows it: the match status (perfect / partial), the ABI that
 * decodes calls and logs, and the verified source files, from the node's verification service
 * (services/verified-contracts.ts; docs/verification.md). Looked up once per address per page.
 */
import { type NodeContext, getVerifiedContract } from '../services/index.js';

export interface VerifiedContract {
  status: 'perfect' | 'partial';
  name: string | null;
  compiler: string | null;
  abi: readonly unknown[];
  files: { path: string; content: string }[];
}

/** The verification of the contract at address, or null when it is not verified. */
export async function verifiedContract(ctx: NodeContext, address: string): Promise<VerifiedContract | null> {
  const v = await getVerifiedContract(ctx, address);
  if (!v) return null;
  return {
    status: v.match,
    name: v.contractName ? `${v.contractName} (${v.contractPath})` : null,
    compiler: v.compilerVersion || null,
    abi: v.abi,
    files: Object.entries(v.sources).map(([path, content]) => ({ path, content })),
  };
}

/** Verified contracts of one page by address (each looked up once). */
export function verificationLookup(ctx: NodeContext): (address: string | null | undefined) => Promise<VerifiedContract | null> {
  const seen = new Map<string, Promise<VerifiedContract | null>>();
  return (address) => {
    if (!address) return Promise.resolve(null);
    const a = address.toLowerCase();
    let p = seen.get(a);
    if (!p) seen.set(a, (p = verifiedContract(ctx, a)));
    return p;
  };
}
