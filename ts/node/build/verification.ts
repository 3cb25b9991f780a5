/**
 * The contract verification service on this node's chain (spec part D): chains 7119 and 7120 only (another
 * chain id gets a service that refuses every chain). Its compile workers start on the first verification.
 */
import type { Logger } from 'pino';
import { type NodeContext, followRollbacks, nodeChainReader } from '../../services/index.js';
import type { KvStore } from '../../storage/index.js';
import { CompilePool, VERIFY_CHAINS, VerificationService, VerificationStore } from '../../verify/index.js';
import type { NodeConfig } from '../config.js';
import type { Built } from './stops.js';

/** Sets `ctx.verification`; verified contracts whose code a rollback removed are forgotten. */
export function buildVerification(
  config: NodeConfig,
  ctx: NodeContext,
  db: KvStore,
  log: Logger,
): Built<{ verification: VerificationService }> {
  const chainId = ctx.chain.params.chainId;
  const chains = new Map(VERIFY_CHAINS.includes(chainId) ? [[chainId, nodeChainReader(ctx)]] : []);
  const verification = new VerificationService({
    chains,
    store: new VerificationStore(db),
    compiler: new CompilePool({
      timeoutMs: config.verifyTimeoutMs,
      memoryMb: config.verifyMemoryMb,
      onError: (err) => log.error({ err }, 'compile worker failed'),
    }),
    solcDir: config.solcDir,
  });
  ctx.verification = verification;
  const unfollow = followRollbacks(ctx);
  return {
    verification,
    stop: async () => {
      unfollow();
      await verification.close();
    },
  };
}
