/** The staking module's event names (receipts, index terms, reward history); unique across modules. */
export const STAKING_EVENTS = {
  ValidatorRegistered: 'ValidatorRegistered',
  Delegated: 'Delegated',
  Undelegated: 'Undelegated',
  Redelegated: 'Redelegated',
  /** A ClaimRewards payment of one delegation (distribution). */
  RewardsClaimed: 'RewardsClaimed',
  /** Pending rewards a delegation change paid out first (distribution). */
  RewardsSettled: 'RewardsSettled',
  CommissionClaimed: 'CommissionClaimed',
  CommissionUpdated: 'CommissionUpdated',
  Unjailed: 'Unjailed',
  AuthorityAdded: 'AuthorityAdded',
} as const;
