/**
 * The staking module's handlers (Cosmos keeper/msg_server.go): one per row of operations.ts, each the
 * state transition of its operation. Each failure throws its class from errors.ts: a 400 at admission,
 * a status-0 receipt at inclusion.
 */
import { getAccount, putAccount } from '../../state/index.js';
import type { OperationCall } from '../kit/context.js';
import type { HandlerMap } from '../kit/module.js';
import { baseToWei, weiToBase } from '../kit/units.js';
import { type SettlementSink, addToPool, bond, credit, settleRewards, sharesValue, unbond } from './core.js';
import {
  AlreadyAuthority,
  AlreadyRegistered,
  CommissionAlreadyChanged,
  CommissionChangeTooLarge,
  CommissionTooHigh,
  ExceedsDelegation,
  InsufficientBalance,
  NotGenesisAdmin,
  NotJailed,
  NothingToClaim,
  RedelegationInFlight,
  RedelegationToSameValidator,
  SelfStakeWouldFall,
  StakeBelowMinimum,
  StillJailed,
  TombstonedForever,
  TransitiveRedelegation,
  UnjailSelfStakeTooLow,
  UnknownValidator,
  ValidatorJailed,
  ValidatorTombstoned,
} from './errors.js';
import { STAKING_EVENTS as EV } from './events.js';
import type { StakingOperations } from './operations.js';
import { MAX_COMMISSION_BPS, MAX_COMMISSION_CHANGE_BPS, MIN_SELF_STAKE_BASE, UNBONDING_EPOCHS } from './params.js';
import { addRedelegationEntry, incomingRedelegationUntil, putIncomingRedelegation } from './redelegations.js';
import { settlementFields } from './reward-history.js';
import {
  type ValidatorRecord,
  delegatorValidators,
  getDelegation,
  getPoaSet,
  getRedelegation,
  getTotals,
  getUnbondingShares,
  getValidator,
  putDelegation,
  putPoaSet,
  putRedelegation,
  putRegistry,
  putTotals,
  putUnbondingShares,
  putValidator,
  queueAppend,
  registry,
} from './state.js';

/** Any staking call, whatever its message (the helpers below read only the state, the sender and the block). */
type AnyCall = OperationCall<unknown>;

const epochOf = (call: AnyCall): number => Math.floor(call.env.height / call.env.ledger.epochLength);

/** Take amount (base units) from the sender's balance for bonding. */
function debit(call: AnyCall, amount: bigint): void {
  const a = getAccount(call.state, call.tx.from_address);
  const need = baseToWei(amount);
  if (a.balance < need) throw new InsufficientBalance(weiToBase(a.balance), amount);
  a.balance -= need;
  putAccount(call.state, call.tx.from_address, a);
}

function validatorOrFail(call: AnyCall, address: string): ValidatorRecord {
  const v = getValidator(call.state, address);
  if (!v) throw new UnknownValidator(address);
  return v;
}

function bondable(call: AnyCall, address: string): ValidatorRecord {
  const v = validatorOrFail(call, address);
  if (v.status === 'jailed') throw new ValidatorJailed(address);
  if (v.status === 'tombstoned') throw new ValidatorTombstoned(address);
  return v;
}

/** Rewards a delegation change pays out first are recorded as a RewardsSettled event (reward history). */
const settledBy =
  (call: AnyCall): SettlementSink =>
  (s) =>
    call.emit({ type: EV.RewardsSettled, fields: { ...settlementFields(s), cause: call.op.name } });

/** A self-delegation may not fall below the minimum unless it is withdrawn entirely (the validator leaves). */
function checkSelfStake(v: ValidatorRecord, delegator: string, remaining: bigint): void {
  if (delegator === v.address && remaining > 0n && remaining < MIN_SELF_STAKE_BASE)
    throw new SelfStakeWouldFall(remaining, MIN_SELF_STAKE_BASE);
}

export const STAKING_HANDLERS: HandlerMap<StakingOperations> = {
  RegisterValidator(call) {
    const self = call.tx.from_address;
    const { stake, commission_bps: commission } = call.op.fields;
    if (getValidator(call.state, self)) throw new AlreadyRegistered(self);
    if (stake < MIN_SELF_STAKE_BASE) throw new StakeBelowMinimum(stake, MIN_SELF_STAKE_BASE);
    if (commission > MAX_COMMISSION_BPS) throw new CommissionTooHigh();
    debit(call, stake);
    const v: ValidatorRecord = {
      address: self,
      name: call.op.fields.name,
      public_key: call.tx.public_key,
      commission_bps: commission,
      commission_epoch: -1,
      tokens: 0n,
      shares: 0n,
      status: 'bonded',
      jailed_until_epoch: 0,
      registered_height: call.env.height,
      acc: 0n,
      commission_unclaimed: 0n,
      rewards_total: 0n,
      commission_total: 0n,
    };
    putRegistry(call.state, [...registry(call.state), self]);
    const shares = bond(call.state, self, v, stake, epochOf(call), settledBy(call));
    call.emit({
      type: EV.ValidatorRegistered,
      fields: {
        validator: self,
        name: v.name,
        stake: stake.toString(),
        commission_bps: commission.toString(),
        shares: shares.toString(),
      },
    });
  },
  Delegate(call) {
    const v = bondable(call, call.op.fields.validator);
    const { amount } = call.op.fields;
    debit(call, amount);
    const shares = bond(call.state, call.tx.from_address, v, amount, epochOf(call), settledBy(call));
    call.emit({
      type: EV.Delegated,
      fields: {
        delegator: call.tx.from_address,
        validator: v.address,
        amount: amount.toString(),
        shares: shares.toString(),
        acc: v.acc.toString(),
      },
    });
  },
  Undelegate(call) {
    const delegator = call.tx.from_address;
    const v = validatorOrFail(call, call.op.fields.validator);
    const d = getDelegation(call.state, delegator, v.address);
    const { amount } = call.op.fields;
    const have = d ? sharesValue(v, d.shares) : 0n;
    if (!d || have < amount) throw new ExceedsDelegation('undelegate', amount, have, v.address);
    checkSelfStake(v, delegator, have - amount);
    const complete = epochOf(call) + UNBONDING_EPOCHS;
    const tokens = unbond(call.state, delegator, v, d, amount, settledBy(call));
    const poolShares = addToPool(call.state, v.address, complete, tokens);
    const before = getUnbondingShares(call.state, delegator, v.address, complete);
    if (before === 0n) queueAppend(call.state, complete, delegator, v.address);
    putUnbondingShares(call.state, delegator, v.address, complete, before + poolShares);
    call.emit({
      type: EV.Undelegated,
      fields: {
        delegator,
        validator: v.address,
        amount: tokens.toString(),
        shares: d.shares.toString(),
        acc: v.acc.toString(),
        complete_epoch: String(complete),
      },
    });
  },
  Redelegate(call) {
    const delegator = call.tx.from_address;
    const { from_validator: fromAddr, to_validator: toAddr, amount } = call.op.fields;
    if (fromAddr === toAddr) throw new RedelegationToSameValidator();
    const from = validatorOrFail(call, fromAddr);
    const to = bondable(call, toAddr);
    const epoch = epochOf(call);
    const inFlight = getRedelegation(call.state, delegator, fromAddr, toAddr);
    if (inFlight && inFlight.complete_epoch > epoch) throw new RedelegationInFlight(fromAddr, toAddr, inFlight.complete_epoch);
    const incoming = incomingRedelegationUntil(call.state, delegator, fromAddr);
    if (incoming > epoch) throw new TransitiveRedelegation(fromAddr, incoming);
    const d = getDelegation(call.state, delegator, fromAddr);
    const have = d ? sharesValue(from, d.shares) : 0n;
    if (!d || have < amount) throw new ExceedsDelegation('redelegate', amount, have, fromAddr);
    checkSelfStake(from, delegator, have - amount);
    const tokens = unbond(call.state, delegator, from, d, amount, settledBy(call));
    const shares = bond(call.state, delegator, to, tokens, epoch, settledBy(call));
    const complete = epoch + UNBONDING_EPOCHS;
    putRedelegation(call.state, delegator, fromAddr, toAddr, { amount: tokens, complete_epoch: complete });
    // Slashable by the source until it matures (Cosmos: redelegation entries); no redelegating it onwards meanwhile.
    addRedelegationEntry(call.state, fromAddr, epoch, {
      delegator,
      to: toAddr,
      initial: tokens,
      dst_shares: shares,
      creation_height: call.env.height,
    });
    putIncomingRedelegation(call.state, delegator, toAddr, complete);
    call.emit({
      type: EV.Redelegated,
      fields: {
        delegator,
        from_validator: fromAddr,
        to_validator: toAddr,
        amount: tokens.toString(),
        from_shares: d.shares.toString(),
        from_acc: from.acc.toString(),
        to_shares: (getDelegation(call.state, delegator, toAddr)?.shares ?? shares).toString(),
        to_acc: to.acc.toString(),
        complete_epoch: String(epoch + UNBONDING_EPOCHS),
      },
    });
  },
  ClaimRewards(call) {
    const delegator = call.tx.from_address;
    const only = call.op.fields.validator;
    const targets = only ? [only] : delegatorValidators(call.state, delegator);
    if (only && !getValidator(call.state, only)) throw new UnknownValidator(only);
    let total = 0n;
    for (const va of targets) {
      const v = getValidator(call.state, va);
      const d = getDelegation(call.state, delegator, va);
      if (!v || !d) continue;
      const paid = settleRewards(call.state, delegator, v, d);
      if (!paid) continue;
      putDelegation(call.state, delegator, va, d);
      total += paid.amount;
      call.emit({ type: EV.RewardsClaimed, fields: settlementFields(paid) });
    }
    // A validator claims its commission with its rewards (all, or naming itself).
    const own = getValidator(call.state, delegator);
    if (own && (!only || only === delegator) && own.commission_unclaimed > 0n) {
      const c = own.commission_unclaimed;
      own.commission_unclaimed = 0n;
      putValidator(call.state, own);
      credit(call.state, delegator, c);
      const totals = getTotals(call.state);
      totals.rewards_pool -= c;
      putTotals(call.state, totals);
      total += c;
      call.emit({ type: EV.CommissionClaimed, fields: { validator: delegator, amount: c.toString() } });
    }
    if (total === 0n) throw new NothingToClaim(only);
  },
  UpdateCommission(call) {
    const v = validatorOrFail(call, call.tx.from_address);
    const next = call.op.fields.commission_bps;
    const epoch = epochOf(call);
    if (v.commission_epoch === epoch) throw new CommissionAlreadyChanged(epoch);
    const change = next > v.commission_bps ? next - v.commission_bps : v.commission_bps - next;
    if (change > MAX_COMMISSION_CHANGE_BPS) throw new CommissionChangeTooLarge(v.commission_bps, next, MAX_COMMISSION_CHANGE_BPS);
    const before = v.commission_bps;
    v.commission_bps = next;
    v.commission_epoch = epoch;
    putValidator(call.state, v);
    call.emit({
      type: EV.CommissionUpdated,
      fields: { validator: v.address, from_bps: before.toString(), to_bps: next.toString() },
    });
  },
  Unjail(call) {
    const v = validatorOrFail(call, call.tx.from_address);
    if (v.status === 'tombstoned') throw new TombstonedForever();
    if (v.status !== 'jailed') throw new NotJailed();
    const epoch = epochOf(call);
    if (epoch < v.jailed_until_epoch) throw new StillJailed(v.jailed_until_epoch, epoch);
    const self = getDelegation(call.state, v.address, v.address);
    if (!self || sharesValue(v, self.shares) < MIN_SELF_STAKE_BASE) throw new UnjailSelfStakeTooLow(MIN_SELF_STAKE_BASE);
    v.status = 'bonded';
    putValidator(call.state, v);
    call.emit({ type: EV.Unjailed, fields: { validator: v.address } });
  },
  AddAuthority(call) {
    const admin = call.env.ledger.admin;
    if (!admin || call.tx.from_address !== admin) throw new NotGenesisAdmin();
    const { address, public_key: publicKey, name } = call.op.fields;
    const current = getPoaSet(call.state) ?? call.env.ledger.authorities.map((a) => ({ ...a, power: 1n }));
    if (current.some((m) => m.address === address)) throw new AlreadyAuthority(address);
    putPoaSet(call.state, [...current, { address, name, public_key: publicKey, power: 1n }]);
    call.emit({ type: EV.AuthorityAdded, fields: { address, name } });
  },
};
