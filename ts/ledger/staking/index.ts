/**
 * DPoS staking. The module is not active yet (ledger/rules.ts refuses staking operations at admission
 * and in blocks), so apply is never reached; the staking issue fills it in.
 */
import { OperationFailed, type OperationModule } from '../operation-context.js';

export const stakingModule: OperationModule = {
  family: 'staking',
  apply: () => {
    throw new OperationFailed('staking is not active yet');
  },
  indexTerms: () => [],
};
