/**
 * The SRC-721 failures: one class per failure, each with a stable code (`nft/<failure>`) clients and tests
 * match on. The messages are what receipts and 400 answers carry (unchanged since the first release).
 */
import { OperationFailed } from '../kit/context.js';

export class UnknownCollection extends OperationFailed {
  constructor(collection: string) {
    super(`unknown collection ${collection}`, 'nft/unknown_collection');
  }
}

export class CollectionExists extends OperationFailed {
  constructor(collection: string) {
    super(`collection ${collection} already exists`, 'nft/collection_exists');
  }
}

/** Unknown or burned. */
export class UnknownNftToken extends OperationFailed {
  constructor(id: bigint, collection: string) {
    super(`token ${id} does not exist in collection ${collection}`, 'nft/unknown_token');
  }
}

export class ZeroRecipient extends OperationFailed {
  constructor(what: 'mint' | 'transfer') {
    super(`cannot ${what} to the zero address${what === 'transfer' ? ': use BurnNft' : ''}`, 'nft/zero_recipient');
  }
}

export class NoTokenIdLeft extends OperationFailed {
  constructor() {
    super('no token id left in this collection', 'nft/no_token_id_left');
  }
}

/** A frozen collection refuses mints and base-URI updates; `consequence` says which. */
export class CollectionFrozen extends OperationFailed {
  constructor(collection: string, consequence: string) {
    super(`collection ${collection} is frozen: ${consequence}`, 'nft/frozen');
  }
}

export class AlreadyFrozen extends OperationFailed {
  constructor(collection: string) {
    super(`collection ${collection} is already frozen`, 'nft/already_frozen');
  }
}

export class NotMinter extends OperationFailed {
  constructor() {
    super('only the collection deployer or an operator it approved may mint', 'nft/not_minter');
  }
}

/** The collection's counters record is missing beside its fields (a broken state, never a user error). */
export class CountersMissing extends OperationFailed {
  constructor() {
    super('NFT state: collection counters missing', 'nft/counters_missing');
  }
}

export class MaxSupplyReached extends OperationFailed {
  constructor(max: bigint) {
    super(`max supply reached: ${max} tokens minted`, 'nft/max_supply_reached');
  }
}

export class TokenIdBurned extends OperationFailed {
  constructor(id: bigint) {
    super(`token id ${id} was burned and cannot be reused`, 'nft/token_id_burned');
  }
}

export class TokenIdTaken extends OperationFailed {
  constructor(id: bigint) {
    super(`token id ${id} already exists`, 'nft/token_id_taken');
  }
}

export class TransferNotAllowed extends OperationFailed {
  constructor() {
    super('not allowed: the sender is not the owner, an approved spender or an operator of the owner', 'nft/not_allowed');
  }
}

export class NotNftOwner extends OperationFailed {
  constructor() {
    super('only the owner may burn a token', 'nft/not_owner');
  }
}

export class NotApprover extends OperationFailed {
  constructor() {
    super('only the owner or an operator of the owner may approve a spender for a token', 'nft/not_approver');
  }
}

export class SelfApproval extends OperationFailed {
  constructor() {
    super('the owner cannot be approved for its own token', 'nft/self_approval');
  }
}

export class ZeroSpender extends OperationFailed {
  constructor() {
    super('spender must not be the zero address: use "" to revoke', 'nft/zero_spender');
  }
}

export class ExpiryNotAhead extends OperationFailed {
  constructor(height: number) {
    super(`expiry_height must be 0 (no expiry) or above the current height ${height}`, 'nft/expiry_not_ahead');
  }
}

export class SelfOperator extends OperationFailed {
  constructor() {
    super('an address cannot be its own operator', 'nft/self_operator');
  }
}

export class NotDeployer extends OperationFailed {
  constructor(what: string) {
    super(`only the collection deployer may ${what}`, 'nft/not_deployer');
  }
}
