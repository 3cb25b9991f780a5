/**
 * Modules this chain does not run yet answer NotActiveError (REST 400, JSON-RPC -32000). The error and
 * the token/staking messages live with the transaction rules (ledger/rules.ts), which refuse those
 * operation kinds at admission and in blocks alike.
 */
export { NotActiveError, STAKING_NOT_ACTIVE, TOKENS_NOT_ACTIVE } from '../ledger/index.js';

export const VALIDATOR_CHANGES_NOT_ACTIVE =
  'validator-set changes are not supported until the staking module (DPoS) is active: the authority set is fixed by genesis';
