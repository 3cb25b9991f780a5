/**
 * GET /explorer/validators and GET /explorer/validators/{address} (alias /explorer/validator/{address}):
 * stake, commission, uptime and status from the staking records in state, production from the chain index,
 * delegators from the state index, rewards per epoch from the staking records and the chain index.
 */
import {
  type NodeContext,
  type StakingValidatorView,
  findValidator,
  validatorBlocksOverTime,
  validatorDelegators,
  validatorRewards,
  stakingValidators,
  validatorSet,
} from '../../services/index.js';
import { recentBlocksBy } from '../read-model.js';
import { NotFoundError } from '../../util/index.js';
import { barChart } from '../charts.js';
import { coins, int, percent } from '../format.js';
import { links } from '../links.js';
import { addressParam, pagingParams } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView, blockRow } from '../rows.js';
import { type PageHandler, pager, validatorNames } from './common.js';

/** Latest blocks of a validator shown on its page (from the in-memory window). */
export const VALIDATOR_RECENT_BLOCKS = 10;
export const DELEGATORS_PAGE = 25;

/** Share of `part` in `total` as a percentage (exact bigint ratio, 4 decimals). */
const shareOf = (part: bigint, total: bigint): string => percent(total > 0n ? Number((part * 1_000_000n) / total) / 10_000 : 0);

/**
 * Every validator (the active set first) with its staking view (blocks this epoch from the staking records,
 * or the chain index for PoA authorities) and the chain index's production counts, by address.
 */
async function validatorRows(ctx: NodeContext) {
  const [staking, set] = await Promise.all([stakingValidators(ctx), validatorSet(ctx)]);
  const all = staking.validators as StakingValidatorView[];
  const activeCount = staking.active_count as number;
  const produced = new Map(set.validators.map((v) => [v.address, v]));
  const bonded = all.slice(0, activeCount).reduce((sum, v) => sum + v.stake, 0n);
  return {
    consensus: staking.consensus as string,
    epoch: staking.epoch_number as number,
    activeCount,
    all,
    produced,
    bonded,
    complete: set.coverage.complete,
  };
}

export const validatorsPage: PageHandler = async (ctx) => {
  const { consensus, epoch, activeCount, all, produced, bonded, complete } = await validatorRows(ctx);
  const rows = all.map((v, i) => {
    const p = produced.get(v.address);
    return {
      rank: i < activeCount ? String(i + 1) : '',
      href: links.validator(v.address),
      name: v.name,
      address: addrView(v.address),
      status: v.status,
      stake: coins(v.stake),
      power: v.status === 'active' && bonded > 0n ? shareOf(v.stake, bonded) : '',
      selfStake: coins(v.self_stake),
      delegators: int(v.delegators),
      commission: percent(v.commission * 100),
      uptime: percent(v.uptime * 100),
      epochBlocks: int(v.blocks_produced_epoch),
      blocks: int(p?.blocks_produced ?? 0),
      last:
        p?.last_block_height === null || p === undefined
          ? null
          : { href: links.block(p.last_block_height), text: int(p.last_block_height) },
    };
  });
  return html(
    renderPage(ctx, 'validators', {
      title: 'Validators',
      consensus,
      epoch: int(epoch),
      active: int(activeCount),
      totalStake: coins(bonded),
      rows,
      partial: !complete,
    }),
  );
};

interface EpochRewards {
  epoch_number: number;
  blocks_produced: number;
  total_rewards: bigint;
  commission: bigint;
  delegator_rewards: bigint;
}

interface Rewards {
  blocks_produced: number;
  block_rewards: bigint;
  fee_rewards: bigint;
  total_rewards: bigint;
  commission: bigint;
  commission_unclaimed: bigint;
  delegator_rewards: bigint;
  by_epoch: EpochRewards[];
}

interface DelegatorRow {
  delegator: string;
  amount: bigint;
  since_epoch: number;
  pending_reward: bigint;
}

export const validatorPage: PageHandler = async (ctx, req) => {
  const address = addressParam(req.params.address ?? '');
  const p = pagingParams(req.query, DELEGATORS_PAGE);
  const v = findValidator(ctx, address);
  if (!v) throw new NotFoundError('this address is not a validator of this chain');
  const [{ all, produced, bonded }, series, rewards, delegation, names] = await Promise.all([
    validatorRows(ctx),
    validatorBlocksOverTime(ctx, address),
    validatorRewards(ctx, address),
    validatorDelegators(ctx, address),
    validatorNames(ctx),
  ]);
  const st = all.find((e) => e.address === address);
  const r = rewards as unknown as Rewards;
  const d = delegation as unknown as { delegators: DelegatorRow[]; total: number; total_delegated: bigint };
  const points = (series.series as { epoch_number: number; blocks_produced: number; blocks_total: number }[]).map((e) => ({
    label: `#${e.epoch_number}`,
    value: e.blocks_produced,
    title: `epoch ${e.epoch_number}: ${int(e.blocks_produced)} of ${int(e.blocks_total)} blocks`,
  }));
  const stake = st?.stake ?? 0n;
  const ranked = [...d.delegators].sort((a, b) => (b.amount > a.amount ? 1 : b.amount < a.amount ? -1 : 0));
  return html(
    renderPage(ctx, 'validator', {
      title: `Validator ${v.name}`,
      name: v.name,
      address: addrView(address),
      status: st?.status ?? 'unbonding',
      publicKey: v.public_key,
      fields: [
        {
          k: 'Status',
          v: st
            ? `${st.status}${st.jailed_until_epoch !== null ? ` until epoch ${int(st.jailed_until_epoch)}` : ''}`
            : 'not registered',
        },
        { k: 'Stake (bonded)', v: coins(stake) },
        { k: 'Self-stake', v: coins(st?.self_stake ?? 0n) },
        { k: 'Delegated by others', v: coins(st?.delegated_stake ?? 0n) },
        {
          k: 'Voting power',
          v: st?.status === 'active' && bonded > 0n ? `${shareOf(stake, bonded)} of the active stake` : 'none',
        },
        { k: 'Commission', v: `${percent((st?.commission ?? 0) * 100)} (${int(st?.commission_bps ?? 0)} bps)` },
        { k: 'Uptime', v: percent((st?.uptime ?? 1) * 100) },
        { k: 'Blocks this epoch', v: int(st?.blocks_produced_epoch ?? 0) },
        { k: 'Blocks produced', v: int(produced.get(address)?.blocks_produced ?? r.blocks_produced) },
        { k: 'Proposer rewards (block rewards + fee share)', v: coins(r.total_rewards) },
        { k: 'Commission earned', v: `${coins(r.commission)} (${coins(r.commission_unclaimed)} unclaimed)` },
        { k: "Delegators' rewards distributed", v: coins(r.delegator_rewards) },
      ],
      chart: barChart('Blocks produced per epoch', points),
      rewardRows: r.by_epoch.map((e) => ({
        epoch: int(e.epoch_number),
        blocks: int(e.blocks_produced),
        proposer: coins(e.total_rewards),
        commission: coins(e.commission),
        delegators: coins(e.delegator_rewards),
      })),
      delegators: ranked.slice(p.offset, p.offset + p.limit).map((x) => ({
        who: addrView(x.delegator),
        self: x.delegator === address,
        amount: coins(x.amount),
        share: shareOf(x.amount, stake),
        since: int(x.since_epoch),
        pending: coins(x.pending_reward),
      })),
      delegatorTotal: int(d.total),
      delegated: coins(d.total_delegated),
      delegatorsPager: pager(links.validator(address), p, DELEGATORS_PAGE, d.total),
      blocks: recentBlocksBy(ctx, address, VALIDATOR_RECENT_BLOCKS).map((b) => blockRow(b, names)),
    }),
  );
};
