/**
 * SRC-20 native tokens. The module is not active yet (ledger/rules.ts refuses token operations at
 * admission and in blocks), so apply is never reached; the token issue fills it in.
 */
import { OperationFailed, type OperationModule } from '../operation-context.js';

export const tokenModule: OperationModule = {
  family: 'token',
  apply: () => {
    throw new OperationFailed('token operations are not active on this chain yet');
  },
  indexTerms: () => [],
};
