/**
 * Every route of the verification service, at the root (the spec's paths) and again under VERIFY_MOUNT, a
 * base URL tools can take as "the Sourcify server": Hardhat posts to its `apiUrl` itself and reads
 * `apiUrl/check-all-by-addresses`; Foundry appends `v2/...` to its `--verifier-url`. On the node the root
 * POST / is JSON-RPC, so tools use the mount there (docs/verification.md).
 */
import type { VerifyRoute } from './http-common.js';
import { v1Routes } from './routes-v1.js';
import { v2Routes } from './routes-v2.js';

export const VERIFY_MOUNT = '/sourcify';

const verifyRoute = v1Routes.find((r) => r.method === 'POST' && r.path === '/verify')!;

/** The routes at the root and under the mount (POST to the mount itself verifies, as Sourcify's POST / does). */
export const verifyRoutes: VerifyRoute[] = [
  ...v1Routes,
  ...v2Routes,
  { ...verifyRoute, path: VERIFY_MOUNT, summary: `${verifyRoute.summary} (Sourcify's POST / under ${VERIFY_MOUNT})` },
  ...[...v1Routes, ...v2Routes].map((r) => ({ ...r, path: `${VERIFY_MOUNT}${r.path}` })),
];

/** The standalone service also verifies on POST / (nothing else is served there), like sourcify.dev/server. */
export const standaloneRoutes: VerifyRoute[] = [...verifyRoutes, { ...verifyRoute, path: '/' }];
