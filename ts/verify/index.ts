/**
 * The contract verification service (Sourcify-compatible; spec: auxiliary interfaces part D; design in
 * docs/verification.md). Other folders import only this file.
 */
export {
  COMPILER_IDLE_MS,
  CompilePool,
  type CompilePoolOptions,
  DEFAULT_COMPILE_MEMORY_MB,
  DEFAULT_COMPILE_QUEUE,
  DEFAULT_COMPILE_TIMEOUT_MS,
  DEFAULT_COMPILE_WORKERS,
} from './compile-pool.js';
export * from './errors.js';
export type { VerifyHooks, VerifyResult, VerifyRoute } from './http-common.js';
export type { ChainReader, CreationTransaction, MatchKind, VerificationRecord } from './interface.js';
export { VERIFY_MOUNT, standaloneRoutes, verifyRoutes } from './routes.js';
export { createVerifyHandler } from './server.js';
export {
  CHAIN_NAMES,
  VERIFY_CHAINS,
  VerificationService,
  type VerificationServiceOptions,
  type VerifyOutcome,
} from './service.js';
export { DEFAULT_VERIFY_PORT, type StandaloneOptions, type StandaloneService, startStandalone } from './standalone.js';
export { VerificationStore } from './store.js';
