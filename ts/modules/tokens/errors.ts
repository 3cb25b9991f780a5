/**
 * The SRC-20 failures: one class per failure, each with a stable code (`tokens/<failure>`) clients and
 * tests match on. The messages are what receipts and 400 answers carry (unchanged since the first release).
 */
import { OperationFailed } from '../kit/context.js';

export class UnknownToken extends OperationFailed {
  constructor(contract: string) {
    super(`unknown token contract ${contract}`, 'tokens/unknown_token');
  }
}

export class TokenAlreadyExists extends OperationFailed {
  constructor(contract: string) {
    super(`token contract ${contract} already exists`, 'tokens/already_exists');
  }
}

export class InsufficientTokenBalance extends OperationFailed {
  constructor(holder: string, have: bigint, needed: bigint) {
    super(`insufficient token balance: ${holder} holds ${have}, ${needed} needed`, 'tokens/insufficient_balance');
  }
}

export class InsufficientAllowance extends OperationFailed {
  constructor(owner: string, spender: string, allowed: bigint, needed: bigint) {
    super(
      `insufficient allowance: ${owner} approved ${allowed} to ${spender}, ${needed} needed`,
      'tokens/insufficient_allowance',
    );
  }
}

/** Only the deployer mints. */
export class NotTokenOwner extends OperationFailed {
  constructor(owner: string, contract: string) {
    super(`only the deployer ${owner} may mint ${contract}`, 'tokens/not_owner');
  }
}

export class MaxSupplyExceeded extends OperationFailed {
  constructor(supply: bigint, amount: bigint, max: bigint) {
    super(`mint exceeds max_supply: supply ${supply} + ${amount} > ${max}`, 'tokens/max_supply_exceeded');
  }
}

export class SupplyOverflow extends OperationFailed {
  constructor() {
    super('mint exceeds the u128 supply limit', 'tokens/supply_overflow');
  }
}
