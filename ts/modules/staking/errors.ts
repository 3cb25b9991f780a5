/**
 * Why a staking operation fails: one class per failure, each with a stable code (clients and tests match
 * on it; the message is for people and unchanged from before the codes). The code's prefix names the
 * Cosmos SDK module the rule belongs to (staking, distribution, slashing), so it stays the same if the
 * module is ever split (docs/tokens-and-staking.md). Transports map them by their base class.
 */
import { OperationFailed } from '../kit/context.js';
import { BASE_DECIMALS, BASE_PER_COIN } from '../kit/units.js';

/** Coins without thousands separators, as these messages always read ("1000.5", not formatBase's "1,000.5"). */
const coins = (base: bigint): string => {
  const frac = (base % BASE_PER_COIN).toString().padStart(BASE_DECIMALS, '0').replace(/0+$/, '');
  return `${base / BASE_PER_COIN}${frac ? `.${frac}` : ''}`;
};

export class InsufficientBalance extends OperationFailed {
  constructor(available: bigint, needed: bigint) {
    super(
      `insufficient balance: ${available} base units available, ${needed} needed after the fee`,
      'staking/insufficient_balance',
    );
  }
}

export class UnknownValidator extends OperationFailed {
  constructor(readonly validator: string) {
    super(`unknown validator ${validator}`, 'staking/unknown_validator');
  }
}

/** Delegate / redelegate to a jailed validator. */
export class ValidatorJailed extends OperationFailed {
  constructor(readonly validator: string) {
    super(`validator ${validator} is jailed`, 'staking/validator_jailed');
  }
}

/** Delegate / redelegate to a tombstoned validator. */
export class ValidatorTombstoned extends OperationFailed {
  constructor(readonly validator: string) {
    super(`validator ${validator} is tombstoned`, 'staking/validator_tombstoned');
  }
}

export class AlreadyRegistered extends OperationFailed {
  constructor(readonly validator: string) {
    super(`${validator} is already a registered validator`, 'staking/already_registered');
  }
}

export class StakeBelowMinimum extends OperationFailed {
  constructor(stake: bigint, minimum: bigint) {
    super(`stake ${stake} is below the minimum self-stake ${minimum} base units (15,000 coins)`, 'staking/stake_below_minimum');
  }
}

/** A partial withdrawal of a self-delegation that would leave less than the minimum. */
export class SelfStakeWouldFall extends OperationFailed {
  constructor(remaining: bigint, minimum: bigint) {
    super(
      `self-stake would fall to ${remaining} base units, below the minimum ${minimum} (15,000 coins): withdraw all of it to leave`,
      'staking/self_stake_would_fall',
    );
  }
}

/** Undelegate or redelegate more than the delegation is worth. */
export class ExceedsDelegation extends OperationFailed {
  constructor(what: 'undelegate' | 'redelegate', amount: bigint, have: bigint, validator: string) {
    super(`${what} ${amount} exceeds the delegation of ${have} base units to ${validator}`, 'staking/exceeds_delegation');
  }
}

export class RedelegationToSameValidator extends OperationFailed {
  constructor() {
    super('from_validator and to_validator must differ', 'staking/redelegation_to_same_validator');
  }
}

/** A redelegation between the same pair is still maturing. */
export class RedelegationInFlight extends OperationFailed {
  constructor(from: string, to: string, until: number) {
    super(`a redelegation from ${from} to ${to} is in flight until epoch ${until}`, 'staking/redelegation_in_flight');
  }
}

/** Stake redelegated into a validator cannot move on before it matures (Cosmos: no transitive redelegation). */
export class TransitiveRedelegation extends OperationFailed {
  constructor(from: string, until: number) {
    super(
      `a redelegation into ${from} is in flight until epoch ${until}: stake redelegated to a validator cannot be redelegated again before it matures`,
      'staking/transitive_redelegation',
    );
  }
}

export class NotGenesisAdmin extends OperationFailed {
  constructor() {
    super('only the genesis admin may add a PoA authority', 'staking/not_genesis_admin');
  }
}

export class AlreadyAuthority extends OperationFailed {
  constructor(readonly address: string) {
    super(`${address} is already an authority`, 'staking/already_authority');
  }
}

/** RegisterValidator's commission above 100 % (the wire bound already refuses it; kept as the rule's own check). */
export class CommissionTooHigh extends OperationFailed {
  constructor() {
    super('commission_bps must be at most 10000', 'distribution/commission_too_high');
  }
}

export class NothingToClaim extends OperationFailed {
  constructor(from: string | null) {
    super(from ? `nothing to claim from ${from}` : 'nothing to claim', 'distribution/nothing_to_claim');
  }
}

export class CommissionAlreadyChanged extends OperationFailed {
  constructor(epoch: number) {
    super(`commission was already changed in epoch ${epoch}: once per epoch`, 'distribution/commission_already_changed');
  }
}

export class CommissionChangeTooLarge extends OperationFailed {
  constructor(from: bigint, to: bigint, max: bigint) {
    super(
      `commission change too large: ${from} -> ${to} bps, at most ${max} per epoch`,
      'distribution/commission_change_too_large',
    );
  }
}

export class TombstonedForever extends OperationFailed {
  constructor() {
    super('validator is tombstoned for double signing and can never be unjailed', 'slashing/tombstoned');
  }
}

export class NotJailed extends OperationFailed {
  constructor() {
    super('validator is not jailed', 'slashing/not_jailed');
  }
}

export class StillJailed extends OperationFailed {
  constructor(until: number, now: number) {
    super(`validator is jailed until epoch ${until} (now ${now})`, 'slashing/still_jailed');
  }
}

/** Unjail with a self-stake under the minimum (a slash took it below). */
export class UnjailSelfStakeTooLow extends OperationFailed {
  constructor(minimum: bigint) {
    super(`self-stake below the minimum ${coins(minimum)} coins: delegate to yourself first`, 'slashing/self_stake_too_low');
  }
}
