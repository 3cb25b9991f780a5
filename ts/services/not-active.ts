import { NodeError } from '../util/errors.js';

/**
 * A well-formed request for a module this chain does not run yet (tokens, staking, validator-set changes).
 * REST: 400 `{ success: false, error }`; JSON-RPC: -32000 (the spec's "not active yet" code).
 */
export class NotActiveError extends NodeError {
  constructor(message: string) {
    super(message, 400, -32000);
  }
}

export const TOKENS_NOT_ACTIVE = 'token operations are not active on this chain yet';
export const STAKING_NOT_ACTIVE = 'staking is not active yet: validator self-registration arrives with the staking module (DPoS)';
export const VALIDATOR_CHANGES_NOT_ACTIVE =
  'validator-set changes are not supported until the staking module (DPoS) is active: the authority set is fixed by genesis';
