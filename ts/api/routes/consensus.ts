import { blockSigners, evidenceView } from '../../services/index.js';
import { heightParam } from '../params.js';
import { address, arr, hash, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';

const evidenceEntry = obj({
  id: hash('sha256 of the evidence encoding'),
  validator: address('the validator that signed both votes'),
  height: int('height of the conflicting votes'),
  round: int(),
  type: int('1 prevote, 2 precommit'),
  block_hashes: arr(str('block hash voted for ("" = nil)')),
  included_at: nullable(int('height of the block that included it; null while pending')),
});

export const consensusRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/chain/blocks/:index/signers',
    tag: 'chain',
    summary: "Validators whose precommits are in a block's commit certificate (uptime reads these)",
    params: { index: S.heightParam },
    statuses: { 404: 'no block at that height' },
    response: obj({
      height: int(),
      round: nullable(int('round of the certificate; null outside BFT')),
      signers: arr(address()),
      missing: arr(address('validators of the height without a precommit in the certificate')),
      source: str("last_commit (the next block's copy, the same on every node), justification (the head's own) or none", {
        enum: ['last_commit', 'justification', 'none'],
      }),
    }),
    handler: async (ctx, _req, p) => ({ body: await blockSigners(ctx, heightParam(p.index)) }),
  },
  {
    method: 'GET',
    path: '/chain/evidence',
    tag: 'chain',
    summary: 'Double-sign evidence: pending in the pool, and included by recent blocks',
    response: obj({
      pending: arr(evidenceEntry),
      committed: arr(evidenceEntry),
      total_pending: int(),
      total_committed: int(),
    }),
    handler: (ctx) => ({ body: evidenceView(ctx) }),
  },
];
