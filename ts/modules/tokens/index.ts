/**
 * The SRC-20 module (docs/tokens-and-staking.md): native fungible tokens. Its operations (operations.ts),
 * handlers (handlers.ts), state keys (keys.ts) and records (state.ts), queries (queries.ts), invariants
 * (invariants.ts), errors (errors.ts) and events (events.ts).
 */
import { defineModule } from '../kit/module.js';
import { TOKEN_EVENTS, tokenIndexTerms } from './events.js';
import { TOKEN_HANDLERS } from './handlers.js';
import { TOKEN_INVARIANTS } from './invariants.js';
import { TOKEN_NS } from './keys.js';
import { TOKEN_OPERATIONS } from './operations.js';

export const tokensModule = defineModule({
  name: 'tokens',
  operations: TOKEN_OPERATIONS,
  handlers: TOKEN_HANDLERS,
  namespaces: Object.values(TOKEN_NS),
  events: TOKEN_EVENTS,
  indexTerms: tokenIndexTerms,
  invariants: TOKEN_INVARIANTS,
});

export * from './errors.js';
export { TOKEN_EVENTS, tokenContractTerm, tokenAccountTerm } from './events.js';
export {
  TOKEN_NS,
  tokenContractAddress,
  tokenKey,
  tokenBalanceKey,
  tokenAllowanceKey,
  parseTokenKey,
  parseTokenBalanceKey,
} from './keys.js';
export { TOKEN_OPERATIONS, type TokenOperation, type TokenMessage } from './operations.js';
export { type TokenView, tokenView, tokenBalanceView, MINT_BURN_PARTY, type TokenFeedRow, tokenTransferRow } from './queries.js';
export {
  type TokenRecord,
  getToken,
  tokenExists,
  putToken,
  tokenBalance,
  tokenAllowance,
  tokenHolderCount,
  putTokenBalance,
  putTokenAllowance,
  encodeU128,
  decodeU128,
} from './state.js';
