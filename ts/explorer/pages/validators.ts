/** GET /explorer/validators and GET /explorer/validators/{address} (alias /explorer/validator/{address}). */
import {
  findValidator,
  recentBlocksBy,
  stakingValidators,
  validatorBlocksOverTime,
  validatorDelegators,
  validatorRewards,
  validatorSet,
} from '../../services/index.js';
import { NotFoundError } from '../../util/errors.js';
import { barChart } from '../charts.js';
import { coins, int, percent } from '../format.js';
import { links } from '../links.js';
import { addressParam } from '../params.js';
import { renderPage } from '../render.js';
import { html } from '../response.js';
import { addrView, blockRow } from '../rows.js';
import { type PageHandler, validatorNames } from './common.js';

/** Latest blocks of a validator shown on its page (from the in-memory window). */
export const VALIDATOR_RECENT_BLOCKS = 10;

interface StakingRow {
  address: string;
  status: string;
  stake: bigint;
  commission: number;
  uptime: number;
  blocks_produced_epoch: number;
}

export const validatorsPage: PageHandler = async (ctx) => {
  const [set, staking] = await Promise.all([validatorSet(ctx), stakingValidators(ctx)]);
  const byAddress = new Map((staking.validators as StakingRow[]).map((v) => [v.address, v]));
  return html(
    renderPage(ctx, 'validators', {
      title: 'Validators',
      consensus: set.consensus,
      epoch: int(staking.epoch_number as number),
      totalStake: coins(staking.total_stake as bigint),
      rows: set.validators.map((v) => {
        const st = byAddress.get(v.address);
        return {
          href: links.validator(v.address),
          name: v.name,
          address: addrView(v.address),
          status: st?.status ?? v.status,
          stake: coins(st?.stake ?? 0n),
          commission: percent((st?.commission ?? 0) * 100),
          uptime: percent((st?.uptime ?? 1) * 100),
          epochBlocks: int(st?.blocks_produced_epoch ?? 0),
          blocks: int(v.blocks_produced),
          last: v.last_block_height === null ? null : { href: links.block(v.last_block_height), text: int(v.last_block_height) },
        };
      }),
      partial: !set.coverage.complete,
    }),
  );
};

interface SeriesPoint {
  epoch_number: number;
  blocks_produced: number;
  blocks_total: number;
}

interface Delegator {
  delegator?: string;
  address?: string;
  amount?: bigint;
}

export const validatorPage: PageHandler = async (ctx, req) => {
  const address = addressParam(req.params.address ?? '');
  const v = findValidator(ctx, address);
  if (!v) throw new NotFoundError('this address is not a validator of this chain');
  const [set, staking, series, rewards, names] = await Promise.all([
    validatorSet(ctx),
    stakingValidators(ctx),
    validatorBlocksOverTime(ctx, address),
    validatorRewards(ctx, address),
    validatorNames(ctx),
  ]);
  const entry = set.validators.find((e) => e.address === address);
  const st = (staking.validators as StakingRow[]).find((e) => e.address === address);
  const delegators = (await validatorDelegators(ctx, address)) as {
    delegators: Delegator[];
    total: number;
    total_delegated: bigint;
  };
  const points = (series.series as SeriesPoint[]).map((p) => ({
    label: `#${p.epoch_number}`,
    value: p.blocks_produced,
    title: `epoch ${p.epoch_number}: ${int(p.blocks_produced)} of ${int(p.blocks_total)} blocks`,
  }));
  const r = rewards as {
    blocks_produced: number;
    block_rewards: bigint;
    fee_rewards: bigint;
    total_rewards: bigint;
    by_epoch: { epoch_number: number; blocks_produced: number; total_rewards: bigint }[];
  };
  return html(
    renderPage(ctx, 'validator', {
      title: `Validator ${v.name}`,
      name: v.name,
      address: addrView(address),
      publicKey: v.public_key,
      fields: [
        { k: 'Status', v: st?.status ?? 'active' },
        { k: 'Stake', v: coins(st?.stake ?? 0n) },
        { k: 'Commission', v: percent((st?.commission ?? 0) * 100) },
        { k: 'Uptime', v: percent((st?.uptime ?? 1) * 100) },
        { k: 'Blocks this epoch', v: int(st?.blocks_produced_epoch ?? 0) },
        { k: 'Blocks produced', v: int(entry?.blocks_produced ?? 0) },
        { k: 'Block rewards', v: coins(r.block_rewards) },
        { k: 'Fee rewards', v: coins(r.fee_rewards) },
        { k: 'Total rewards', v: coins(r.total_rewards) },
      ],
      chart: barChart('Blocks produced per epoch', points),
      rewardRows: r.by_epoch
        .slice(0, 10)
        .map((e) => ({ epoch: int(e.epoch_number), blocks: int(e.blocks_produced), rewards: coins(e.total_rewards) })),
      delegators: delegators.delegators.map((d) => ({
        who: addrView(d.delegator ?? d.address ?? null),
        amount: coins(d.amount ?? 0n),
      })),
      delegatorTotal: int(delegators.total),
      delegated: coins(delegators.total_delegated),
      blocks: recentBlocksBy(ctx, address, VALIDATOR_RECENT_BLOCKS).map((b) => blockRow(b, names)),
    }),
  );
};
