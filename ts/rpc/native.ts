import { WEI_PER_COIN, baseToWei } from '../ledger/index.js';
import {
  type NodeContext,
  bftStatus,
  contractCreation,
  delegationViews,
  finalizedView,
  getBalance,
  stakingRewards,
  submitTransaction,
  validatorViews,
  chainIdOf,
} from '../services/index.js';
import { chainIndex } from '../indexes/index.js';
import { qty } from '../util/index.js';
import { RPC, RpcError, type RpcTable } from './types.js';
import { parseQuantity } from './params.js';

/** native_getValidatorSet: the same validators as GET /validators and /staking/validators, amounts in wei hex. */
async function validatorSet(ctx: NodeContext): Promise<Record<string, unknown>> {
  const v = await validatorViews(ctx);
  const poa = v.consensus === 'PoA';
  // Under PoA there is no stake: voting power is a flat equal split of one coin (in wei).
  const flat = v.active.length ? WEI_PER_COIN / BigInt(v.active.length) : 0n;
  // An active set without bonded stake (PoA, or DPoS before any validator staked) votes with equal power.
  const staked = !poa && v.active.some((r) => r.stake > 0n);
  const idx = await chainIndex(ctx);
  const agg = idx.epochs.get(v.epoch);
  const rows = [...v.active, ...v.others].map((r) => ({
    address: r.address,
    name: r.name,
    stake: qty(baseToWei(r.stake)),
    commission: r.commission,
    status: r.status,
    blocks_produced_epoch: r.blocks_produced_epoch || (agg?.producers.get(r.address)?.blocks ?? 0),
    uptime: poa ? 1.0 : r.uptime,
    voting_power: qty(staked ? baseToWei(r.voting_power) : r.status === 'active' ? flat : 0n),
  }));
  return {
    consensus: v.consensus,
    active_count: v.active.length,
    total_count: rows.length,
    total_active_stake: qty(baseToWei(v.active.reduce((s, r) => s + r.stake, 0n))),
    epoch_number: v.epoch,
    validators: rows,
  };
}

export const nativeMethods: RpcTable = {
  native_sendTransaction: {
    params: ['object'],
    handler: async (ctx, [tx]) => {
      const out = await submitTransaction(ctx, tx);
      await ctx.dev?.mined(out.txid);
      return out;
    },
  },
  native_getBalance: { params: ['address'], handler: async (ctx, [a]) => qty(await getBalance(ctx, { address: a as string })) },
  native_getValidatorSet: { params: [], handler: async (ctx) => validatorSet(ctx) },
  native_getBftStatus: { params: [], handler: (ctx) => bftStatus(ctx) },
  native_getFinalizedHeight: { params: [], handler: (ctx) => finalizedView(ctx) },
  // The transaction that created a contract (verification services read the creation code and constructor
  // arguments from it); null when unknown or when another contract created it.
  native_getContractCreation: {
    params: ['address'],
    handler: async (ctx, [a]) => {
      const c = await contractCreation(ctx, a as string);
      if (!c) return null;
      return {
        transactionHash: c.transactionHash,
        blockNumber: qty(c.blockNumber),
        transactionIndex: qty(c.transactionIndex),
        creator: c.creator,
      };
    },
  },
  native_getDelegations: {
    params: ['address'],
    handler: async (ctx, [a]) => {
      const rows = await delegationViews(ctx, a as string);
      return {
        delegator: (a as string).toLowerCase(),
        delegations: rows.flatMap((r) => {
          const out = [];
          if (r.amount > 0n)
            out.push({
              validator: r.validator,
              validator_name: r.validator_name,
              amount: qty(baseToWei(r.amount)),
              pending_reward: qty(r.pending_reward_wei),
              delegated_at_epoch: r.delegated_at_epoch,
              status: r.status,
              unbonding_complete_epoch: null,
            });
          for (const u of r.unbonding)
            out.push({
              validator: r.validator,
              validator_name: r.validator_name,
              amount: qty(baseToWei(u.amount)),
              pending_reward: '0x0',
              delegated_at_epoch: r.delegated_at_epoch,
              status: 'unbonding',
              unbonding_complete_epoch: u.complete_epoch,
            });
          return out;
        }),
      };
    },
  },
  native_getStakingRewards: {
    params: ['address', 'object?'],
    handler: async (ctx, [a, window]) => {
      const w = (window ?? {}) as { from_epoch?: unknown; to_epoch?: unknown };
      const to = w.to_epoch === undefined ? undefined : Number(parseQuantity(w.to_epoch, 1));
      const from = w.from_epoch === undefined ? undefined : Number(parseQuantity(w.from_epoch, 1));
      if (from !== undefined && to !== undefined && from > to)
        throw new RpcError(RPC.invalidParams, 'from_epoch must not exceed to_epoch');
      const r = await stakingRewards(ctx, a as string, from, to);
      return {
        total_lifetime: qty(r.total_lifetime),
        pending_claimable: qty(r.pending_claimable),
        from_epoch: r.from_epoch,
        to_epoch: r.to_epoch,
        by_epoch: r.by_epoch.map((e) => ({
          epoch: e.epoch,
          validator: e.validator,
          reward: qty(e.reward),
          claimed: e.claimed,
          type: e.type,
        })),
      };
    },
  },
};

/** e.g. native-node/v0.1.0/node-v20.19.0/linux-x64: name, version, runtime, platform-arch of this process. */
export function clientVersion(version: string): string {
  return `native-node/v${version}/node-v${process.versions.node}/${process.platform}-${process.arch}`;
}

export const netWeb3Methods: RpcTable = {
  net_version: { params: [], handler: (ctx) => String(chainIdOf(ctx)) },
  net_listening: { params: [], handler: () => true },
  net_peerCount: { params: [], handler: (ctx) => qty(ctx.network?.peers().length ?? 0) },
  // <name>/v<version>/<runtime>/<os>-<arch>. The spec's example ends in "Rust"; this node is TypeScript on
  // Node.js and says so (clients parse only the name and version).
  web3_clientVersion: { params: [], handler: (ctx) => clientVersion(ctx.version) },
};
