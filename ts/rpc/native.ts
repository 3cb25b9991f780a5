import { epochOf, totalPower, validatorSetAt } from '../chain/schedule.js';
import { WEI_PER_COIN } from '../ledger/units.js';
import { TransactionShapeError } from '../ledger/transaction.js';
import {
  type NodeContext,
  bftStatus,
  chainIndex,
  finalizedView,
  getBalanceWei,
  submitTransaction,
  uptimeOf,
} from '../services/index.js';
import { qty } from '../util/hex.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';
import { parseQuantity } from './params.js';

/** The validator set with production and uptime (signed / (signed + missed) certificates) for the current epoch. */
async function validatorSet(ctx: NodeContext): Promise<Record<string, unknown>> {
  const validators = validatorSetAt(ctx.chain.params, ctx.chain.state, ctx.chain.height);
  const idx = await chainIndex(ctx);
  const epoch = idx.epochs.get(epochOf(ctx.chain.params, ctx.chain.height));
  const total = totalPower(validators);
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
      blocks_produced_epoch: epoch?.producers.get(v.address)?.blocks ?? 0,
      uptime: uptimeOf(epoch?.signing.get(v.address)),
      // Under PoA there is no stake: voting power is a flat equal split of one coin (in wei), by power share.
      voting_power: qty(total > 0n ? (WEI_PER_COIN * v.power) / total : 0n),
    })),
  };
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
  native_getFinalizedHeight: { params: [], handler: (ctx) => finalizedView(ctx) },
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
