/**
 * Sourcify API v2 verification jobs (what `forge verify-contract --verifier sourcify` submits and polls):
 * a job starts at submission, runs in the background and is read by id. Jobs live in memory for the
 * process's life, the newest MAX_JOBS of them; the verified contracts themselves are durable (store.ts).
 */
import { randomUUID } from 'node:crypto';
import type { MatchKind } from './interface.js';

export const MAX_JOBS = 1000;

/** API v2 match levels: exact_match (perfect), match (partial), null. */
export type V2Match = 'exact_match' | 'match' | null;

export const v2Match = (m: MatchKind | null): V2Match => (m === 'perfect' ? 'exact_match' : m === 'partial' ? 'match' : null);

/** The minimal contract object of API v2 answers. */
export interface V2ContractMinimal {
  match: V2Match;
  creationMatch: V2Match;
  runtimeMatch: V2Match;
  chainId: string;
  address: string;
  verifiedAt?: string;
}

export interface V2Error {
  customCode: string;
  message: string;
  errorId: string;
}

export interface VerificationJob {
  isJobCompleted: boolean;
  verificationId: string;
  jobStartTime: string;
  jobFinishTime?: string;
  contract: V2ContractMinimal;
  error?: V2Error;
}

/** The overall match: exact when either side matched exactly. */
export function overallMatch(runtime: V2Match, creation: V2Match): V2Match {
  if (runtime === 'exact_match' || creation === 'exact_match') return 'exact_match';
  return runtime ?? creation;
}

export class VerificationJobs {
  private readonly jobs = new Map<string, VerificationJob>();

  /** A new running job for the contract at chainId/address (checksummed address). */
  start(chainId: number, address: string): VerificationJob {
    const job: VerificationJob = {
      isJobCompleted: false,
      verificationId: randomUUID(),
      jobStartTime: new Date().toISOString(),
      contract: { match: null, creationMatch: null, runtimeMatch: null, chainId: String(chainId), address },
    };
    this.jobs.set(job.verificationId, job);
    // Oldest first in insertion order: drop the oldest beyond the bound.
    for (const id of this.jobs.keys()) {
      if (this.jobs.size <= MAX_JOBS) break;
      this.jobs.delete(id);
    }
    return job;
  }

  get(id: string): VerificationJob | undefined {
    return this.jobs.get(id);
  }

  /** Whether a job for this contract is still running (Sourcify refuses a second one). */
  running(chainId: number, address: string): boolean {
    const chain = String(chainId);
    for (const job of this.jobs.values()) {
      if (!job.isJobCompleted && job.contract.chainId === chain && job.contract.address === address) return true;
    }
    return false;
  }

  succeed(job: VerificationJob, contract: V2ContractMinimal): void {
    job.contract = contract;
    job.isJobCompleted = true;
    job.jobFinishTime = new Date().toISOString();
  }

  fail(job: VerificationJob, error: V2Error): void {
    job.error = error;
    job.isJobCompleted = true;
    job.jobFinishTime = new Date().toISOString();
  }
}
