/**
 * The staking operations (docs/tokens-and-staking.md). Each throws OperationFailed naming the problem:
 * a 400 at admission, a status-0 receipt at inclusion.
 */
import { getAccount, putAccount } from '../../state/index.js';
import { type OperationCall, OperationFailed } from '../operation-context.js';
import type { OperationName } from '../operations.js';
import { baseToWei, weiToBase } from '../units.js';
import { type SettlementSink, addToPool, bond, credit, settleRewards, sharesValue, unbond } from './core.js';
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

const epochOf = (call: OperationCall): number => Math.floor(call.env.height / call.env.ledger.epochLength);
const COINS = (base: bigint): string =>
  `${base / 100_000_000n}${base % 100_000_000n ? `.${(base % 100_000_000n).toString().padStart(8, '0').replace(/0+$/, '')}` : ''}`;

/** Take amount (base units) from the sender's balance for bonding. */
function debit(call: OperationCall, amount: bigint): void {
  const a = getAccount(call.state, call.tx.from_address);
  const need = baseToWei(amount);
  if (a.balance < need)
    throw new OperationFailed(
      `insufficient balance: ${weiToBase(a.balance)} base units available, ${amount} needed after the fee`,
    );
  a.balance -= need;
  putAccount(call.state, call.tx.from_address, a);
}

function validatorOrFail(call: OperationCall, address: string): ValidatorRecord {
  const v = getValidator(call.state, address);
  if (!v) throw new OperationFailed(`unknown validator ${address}`);
  return v;
}

function bondable(call: OperationCall, address: string): ValidatorRecord {
  const v = validatorOrFail(call, address);
  if (v.status === 'jailed') throw new OperationFailed(`validator ${address} is jailed`);
  if (v.status === 'tombstoned') throw new OperationFailed(`validator ${address} is tombstoned`);
  return v;
}

const field = (call: OperationCall, name: string): bigint => call.op.fields[name] as bigint;

/** Rewards a delegation change pays out first are recorded as a RewardsSettled event (reward history). */
const settledBy =
  (call: OperationCall): SettlementSink =>
  (s) =>
    call.emit({ type: 'RewardsSettled', fields: { ...settlementFields(s), cause: call.op.name } });
const addr = (call: OperationCall, name: string): string => call.op.fields[name] as string;

/** A self-delegation may not fall below the minimum unless it is withdrawn entirely (the validator leaves). */
function checkSelfStake(v: ValidatorRecord, delegator: string, remaining: bigint): void {
  if (delegator === v.address && remaining > 0n && remaining < MIN_SELF_STAKE_BASE) {
    throw new OperationFailed(
      `self-stake would fall to ${remaining} base units, below the minimum ${MIN_SELF_STAKE_BASE} (15,000 coins): withdraw all of it to leave`,
    );
  }
}

export const STAKING_HANDLERS: Partial<Record<OperationName, (call: OperationCall) => void>> = {
  RegisterValidator(call) {
    const self = call.tx.from_address;
    const stake = field(call, 'stake');
    const commission = field(call, 'commission_bps');
    if (getValidator(call.state, self)) throw new OperationFailed(`${self} is already a registered validator`);
    if (stake < MIN_SELF_STAKE_BASE)
      throw new OperationFailed(
        `stake ${stake} is below the minimum self-stake ${MIN_SELF_STAKE_BASE} base units (15,000 coins)`,
      );
    if (commission > MAX_COMMISSION_BPS) throw new OperationFailed('commission_bps must be at most 10000');
    debit(call, stake);
    const v: ValidatorRecord = {
      address: self,
      name: addr(call, 'name'),
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
      type: 'ValidatorRegistered',
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
    const v = bondable(call, addr(call, 'validator'));
    const amount = field(call, 'amount');
    debit(call, amount);
    const shares = bond(call.state, call.tx.from_address, v, amount, epochOf(call), settledBy(call));
    call.emit({
      type: 'Delegated',
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
    const v = validatorOrFail(call, addr(call, 'validator'));
    const d = getDelegation(call.state, delegator, v.address);
    const amount = field(call, 'amount');
    const have = d ? sharesValue(v, d.shares) : 0n;
    if (!d || have < amount)
      throw new OperationFailed(`undelegate ${amount} exceeds the delegation of ${have} base units to ${v.address}`);
    checkSelfStake(v, delegator, have - amount);
    const complete = epochOf(call) + UNBONDING_EPOCHS;
    const tokens = unbond(call.state, delegator, v, d, amount, settledBy(call));
    const poolShares = addToPool(call.state, v.address, complete, tokens);
    const before = getUnbondingShares(call.state, delegator, v.address, complete);
    if (before === 0n) queueAppend(call.state, complete, delegator, v.address);
    putUnbondingShares(call.state, delegator, v.address, complete, before + poolShares);
    call.emit({
      type: 'Undelegated',
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
    const fromAddr = addr(call, 'from_validator');
    const toAddr = addr(call, 'to_validator');
    if (fromAddr === toAddr) throw new OperationFailed('from_validator and to_validator must differ');
    const from = validatorOrFail(call, fromAddr);
    const to = bondable(call, toAddr);
    const epoch = epochOf(call);
    const inFlight = getRedelegation(call.state, delegator, fromAddr, toAddr);
    if (inFlight && inFlight.complete_epoch > epoch)
      throw new OperationFailed(
        `a redelegation from ${fromAddr} to ${toAddr} is in flight until epoch ${inFlight.complete_epoch}`,
      );
    const incoming = incomingRedelegationUntil(call.state, delegator, fromAddr);
    if (incoming > epoch)
      throw new OperationFailed(
        `a redelegation into ${fromAddr} is in flight until epoch ${incoming}: stake redelegated to a validator cannot be redelegated again before it matures`,
      );
    const d = getDelegation(call.state, delegator, fromAddr);
    const amount = field(call, 'amount');
    const have = d ? sharesValue(from, d.shares) : 0n;
    if (!d || have < amount)
      throw new OperationFailed(`redelegate ${amount} exceeds the delegation of ${have} base units to ${fromAddr}`);
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
      type: 'Redelegated',
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
    const only = call.op.fields.validator as string | null;
    const targets = only ? [only] : delegatorValidators(call.state, delegator);
    if (only && !getValidator(call.state, only)) throw new OperationFailed(`unknown validator ${only}`);
    let total = 0n;
    for (const va of targets) {
      const v = getValidator(call.state, va) as ValidatorRecord;
      const d = getDelegation(call.state, delegator, va);
      if (!d) continue;
      const paid = settleRewards(call.state, delegator, v, d);
      if (!paid) continue;
      putDelegation(call.state, delegator, va, d);
      total += paid.amount;
      call.emit({ type: 'RewardsClaimed', fields: settlementFields(paid) });
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
      call.emit({ type: 'CommissionClaimed', fields: { validator: delegator, amount: c.toString() } });
    }
    if (total === 0n) throw new OperationFailed(only ? `nothing to claim from ${only}` : 'nothing to claim');
  },
  UpdateCommission(call) {
    const v = validatorOrFail(call, call.tx.from_address);
    const next = field(call, 'commission_bps');
    const epoch = epochOf(call);
    if (v.commission_epoch === epoch)
      throw new OperationFailed(`commission was already changed in epoch ${epoch}: once per epoch`);
    const change = next > v.commission_bps ? next - v.commission_bps : v.commission_bps - next;
    if (change > MAX_COMMISSION_CHANGE_BPS)
      throw new OperationFailed(
        `commission change too large: ${v.commission_bps} -> ${next} bps, at most ${MAX_COMMISSION_CHANGE_BPS} per epoch`,
      );
    const before = v.commission_bps;
    v.commission_bps = next;
    v.commission_epoch = epoch;
    putValidator(call.state, v);
    call.emit({
      type: 'CommissionUpdated',
      fields: { validator: v.address, from_bps: before.toString(), to_bps: next.toString() },
    });
  },
  Unjail(call) {
    const v = validatorOrFail(call, call.tx.from_address);
    if (v.status === 'tombstoned')
      throw new OperationFailed('validator is tombstoned for double signing and can never be unjailed');
    if (v.status !== 'jailed') throw new OperationFailed('validator is not jailed');
    const epoch = epochOf(call);
    if (epoch < v.jailed_until_epoch)
      throw new OperationFailed(`validator is jailed until epoch ${v.jailed_until_epoch} (now ${epoch})`);
    const self = getDelegation(call.state, v.address, v.address);
    if (!self || sharesValue(v, self.shares) < MIN_SELF_STAKE_BASE)
      throw new OperationFailed(`self-stake below the minimum ${COINS(MIN_SELF_STAKE_BASE)} coins: delegate to yourself first`);
    v.status = 'bonded';
    putValidator(call.state, v);
    call.emit({ type: 'Unjailed', fields: { validator: v.address } });
  },
  AddAuthority(call) {
    const admin = call.env.ledger.admin;
    if (!admin || call.tx.from_address !== admin) throw new OperationFailed('only the genesis admin may add a PoA authority');
    const address = addr(call, 'address');
    const publicKey = call.op.fields.public_key as string;
    const current = getPoaSet(call.state) ?? call.env.ledger.authorities.map((a) => ({ ...a, power: 1n }));
    if (current.some((m) => m.address === address)) throw new OperationFailed(`${address} is already an authority`);
    putPoaSet(call.state, [...current, { address, name: addr(call, 'name'), public_key: publicKey, power: 1n }]);
    call.emit({ type: 'AuthorityAdded', fields: { address, name: addr(call, 'name') } });
  },
};
