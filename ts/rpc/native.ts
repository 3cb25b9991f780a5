import { epochOf, validatorSetAt } from '../chain/schedule.js';
import { WEI_PER_COIN } from '../ledger/units.js';
import { TransactionShapeError } from '../ledger/transaction.js';
import { type NodeContext, getBalanceWei, submitTransaction } from '../services/index.js';
import { qty } from '../util/hex.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';
import { parseQuantity } from './params.js';

function blocksProducedThisEpoch(ctx: NodeContext): Map<string, number> {
  const { epochLength } = ctx.chain.params;
  const epochStart = Math.floor(ctx.chain.height / epochLength) * epochLength;
  const counts = new Map<string, number>();
  for (const b of ctx.chain.blocks.recentBlocks()) {
    if (b.index < epochStart || b.index === 0) break;
    counts.set(b.validator, (counts.get(b.validator) ?? 0) + 1);
  }
  return counts;
}

function validatorSet(ctx: NodeContext): Record<string, unknown> {
  const validators = validatorSetAt(ctx.chain.params, ctx.chain.state, ctx.chain.height);
  const produced = blocksProducedThisEpoch(ctx);
  // Under PoA there is no stake: voting power is a flat equal split of one coin (in wei).
  const power = validators.length ? WEI_PER_COIN / BigInt(validators.length) : 0n;
  return {
    consensus: ctx.chain.head.consensus,
    active_count: validators.length,
    total_count: validators.length,
    total_active_stake: '0x0',
    epoch_number: epochOf(ctx.chain.params, ctx.chain.height),
    validators: validators.map((v) => ({
      address: v.address,
      name: v.name,
      stake: '0x0',
      commission: 0.0,
      status: 'active',
      blocks_produced_epoch: produced.get(v.address) ?? 0,
      uptime: 1.0,
      voting_power: qty(power),
    })),
  };
}

function bftStatus(ctx: NodeContext): Record<string, unknown> {
  const head = ctx.chain.head;
  const base = {
    consensus: head.consensus,
    current_leader: ctx.consensus.nextProposer(),
    last_finalized_height: ctx.consensus.finalizedHeight(),
    last_finalized_hash: head.hash,
  };
  if (head.consensus === 'PoA') return base;
  return { ...base, current_round: head.round, current_view: head.index + 1, phase: null, rounds_since_last_block: 0 };
}

export const nativeMethods: RpcTable = {
  native_sendTransaction: {
    params: ['object'],
    handler: async (ctx, [tx]) => {
      try {
        return await submitTransaction(ctx, tx);
      } catch (err) {
        // Shape errors are invalid params; rule violations (nonce, amount, limits) are mempool rejections (-32603).
        if (err instanceof TransactionShapeError) throw invalidParams(err.message);
        throw err;
      }
    },
  },
  native_getBalance: { params: ['address'], handler: (ctx, [a]) => qty(getBalanceWei(ctx, a as string)) },
  native_getValidatorSet: { params: [], handler: (ctx) => validatorSet(ctx) },
  native_getBftStatus: { params: [], handler: (ctx) => bftStatus(ctx) },
  native_getFinalizedHeight: {
    params: [],
    handler: async (ctx) => {
      const finalized = ctx.consensus.finalizedHeight();
      const b = await ctx.chain.blocks.getBlock(finalized);
      return {
        finalized_height: finalized,
        finalized_hash: b?.hash ?? null,
        latest_height: ctx.chain.height,
        blocks_behind_finality: ctx.chain.height - finalized,
      };
    },
  },
  // Staking arrives with the DPoS module; until then the state holds no delegations or rewards.
  native_getDelegations: {
    params: ['address'],
    handler: (_ctx, [a]) => ({ delegator: (a as string).toLowerCase(), delegations: [] }),
  },
  native_getStakingRewards: {
    params: ['address', 'object?'],
    handler: (ctx, [, window]) => {
      const epoch = epochOf(ctx.chain.params, ctx.chain.height);
      const w = (window ?? {}) as { from_epoch?: unknown; to_epoch?: unknown };
      const to = w.to_epoch === undefined ? epoch : Number(parseQuantity(w.to_epoch, 1));
      const from = w.from_epoch === undefined ? Math.max(0, to - 29) : Number(parseQuantity(w.from_epoch, 1));
      if (from > to) throw new RpcError(RPC.invalidParams, 'from_epoch must not exceed to_epoch');
      return { total_lifetime: '0x0', pending_claimable: '0x0', from_epoch: from, to_epoch: to, by_epoch: [] };
    },
  },
};

/** e.g. native-node/v0.1.0/linux-x64/node20.19.0 */
export function clientVersion(version: string): string {
  return `native-node/v${version}/${process.platform}-${process.arch}/node${process.versions.node}`;
}

export const netWeb3Methods: RpcTable = {
  net_version: { params: [], handler: (ctx) => String(ctx.chain.params.chainId) },
  net_listening: { params: [], handler: () => true },
  net_peerCount: { params: [], handler: (ctx) => qty(ctx.network?.peers().length ?? 0) },
  // geth's form <name>/v<version>/<os>-<arch>/<runtime>. The spec's example ends in "Rust"; this node is
  // TypeScript on Node.js and says so (clients parse only the name and version).
  web3_clientVersion: { params: [], handler: (ctx) => clientVersion(ctx.version) },
};
