/**
 * A test chain at the execution level: blocks run through the real executeBlock (every transaction rule,
 * the operation modules, fees, coinbase and end-of-block work) on a real StateStore, without consensus,
 * signatures over blocks or disk, so thousands of blocks take seconds. `lastCommit` lets a test say who
 * signed the parent (downtime). After every block every module's invariants must hold.
 */
import { applyGenesisAlloc, type ChainParams, ledgerParams, validatorSetAt } from '../../ts/chain/index.js';
import { type BlockEnv, type ExecutionResult, executeBlock, operationEnv } from '../../ts/execution/index.js';
import {
  applyDoubleSign,
  invariantViolations,
  operationFailure,
  type KeyPair,
  keyPairFromMnemonic,
  TREASURY_ADDRESS,
  getTotals,
  getSupply,
  type SignedTransaction,
  signTransaction,
  BASE_PER_COIN,
  WEI_PER_BASE,
  ZERO_ADDRESS,
} from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { addressFromAccountKey, decodeAccount, StateOverlay, StateStore } from '../../ts/state/index.js';

export class StakingHarness {
  readonly state = new StateStore();
  height = 0;
  private readonly nonces = new Map<string, bigint>();

  constructor(readonly params: ChainParams) {
    const g = new StateOverlay(this.state);
    applyGenesisAlloc(params, g);
    this.state.applyChanges(g.changes);
  }

  /** A signed operation with the sender's next nonce (for this harness; `consume` false: a dry-run probe) and the given fee. */
  op(key: KeyPair, body: unknown, fee = 10_000n, consume = true): SignedTransaction {
    const nonce = this.nonces.get(key.address) ?? 0n;
    if (consume) this.nonces.set(key.address, nonce + 1n);
    return signTransaction(
      {
        from: key.address,
        to: ZERO_ADDRESS,
        amount: 0n,
        fee,
        nonce,
        data: JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        chain_id: this.params.chainId,
        timestamp: this.params.genesisTimestamp,
      },
      key,
    );
  }

  proposerOf(height: number): string {
    const set = validatorSetAt(this.params, this.state, height);
    return set[height % set.length].address;
  }

  /**
   * Execute and apply the next block; every transaction must be included. `doubleSigns`: verified
   * double-sign evidence the block includes, applied before its transactions (as block validation does).
   */
  async block(
    txs: SignedTransaction[] = [],
    opts: { lastCommit?: string[]; doubleSigns?: { validator: string; height: number }[] } = {},
  ): Promise<ExecutionResult> {
    const height = this.height + 1;
    const overlay = new StateOverlay(this.state);
    const env: BlockEnv = {
      height,
      timestamp: this.params.genesisTimestamp + height,
      proposer: this.proposerOf(height),
      chainId: this.params.chainId,
      hardfork: this.params.evmHardfork,
      tokenomicsV2Height: this.params.activation.tokenomicsV2,
      evmActivationHeight: this.params.activation.evm,
      ledger: ledgerParams(this.params),
      blockHash: async () => null,
      ...(opts.lastCommit ? { lastCommit: opts.lastCommit } : {}),
    };
    for (const e of opts.doubleSigns ?? []) applyDoubleSign(overlay, e.validator, e.height, operationEnv(env));
    const r = await executeBlock(env, overlay, this.state, txs);
    if (r.dropped.length) throw new Error(`dropped: ${r.dropped[0].reason}`);
    this.state.applyChanges(overlay.changes);
    this.height = height;
    // Every module's invariants (bonded pool = delegations, outstanding rewards within the pool, ...) hold after every block.
    const violations = invariantViolations(this.state);
    if (violations.length) throw new Error(`invariants broken after block ${height}:\n${violations.join('\n')}`);
    return r;
  }

  /** balances + staked + unbonding + unclaimed rewards + treasury and minted - burned, in wei. */
  supplyCheck(): { held: bigint; issued: bigint; parts: Record<string, bigint> } {
    let balances = 0n;
    let treasury = 0n;
    for (const [k, v] of this.state.entries()) {
      const a = addressFromAccountKey(k);
      if (!a) continue;
      if (a === TREASURY_ADDRESS) treasury = decodeAccount(v).balance;
      else balances += decodeAccount(v).balance;
    }
    const t = getTotals(this.state);
    const s = getSupply(this.state);
    const parts = {
      balances,
      staked: t.bonded * WEI_PER_BASE,
      unbonding: t.unbonding * WEI_PER_BASE,
      rewards: t.rewards_pool,
      treasury,
    };
    return { held: Object.values(parts).reduce((x, y) => x + y, 0n), issued: s.minted - s.burned, parts };
  }
}

const MNEMONIC = 'test test test test test test test test test test test junk';
export const testKey = (i: number): KeyPair => keyPairFromMnemonic(MNEMONIC, i);
/** Four genesis validators with 20,000 + i coins of self-stake each. */
export const stakingValidators = [20, 21, 22, 23].map(testKey);
/** Twelve funded accounts (100,000 coins each). */
export const stakingPeople = Array.from({ length: 12 }, (_, i) => testKey(i));
const COIN = BASE_PER_COIN;

/** A dev chain staked from genesis (DPoS and reward v2 from height 0 unless overridden), by default by stakingValidators. */
export function stakingParams(
  over: Partial<ChainParams['activation']> = {},
  alloc: [string, bigint][] = [],
  epochLength = 10,
  validators: KeyPair[] = stakingValidators,
): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: 1_700_000_000,
    activation: { dposBft: 0, evm: 1_000_000, rewardV2: 0, tokenomicsV2: 0, nft: 1_000_000, ...over },
    validators: validators.map((k, i) => ({
      address: k.address,
      public_key: toHex(k.publicKey),
      name: `v${i}`,
      stake: 20_000n * COIN + BigInt(i) * COIN,
    })),
    alloc: new Map([
      ...stakingPeople.map((k): [string, bigint] => [k.address, 100_000n * COIN]),
      ...validators.map((k): [string, bigint] => [k.address, 1_000n * COIN]),
      ...alloc,
    ]),
    evmHardfork: 'prague',
    epochLength,
  };
}

/** The operation environment of the harness's next block. */
export const nextEnv = (h: StakingHarness) => ({
  height: h.height + 1,
  timestamp: 0,
  proposer: h.proposerOf(h.height + 1),
  chainId: 7120,
  ledger: ledgerParams(h.params),
});

/** The admission dry-run's reason for a transaction now, or null when it applies. */
export const dryRunFailure = (h: StakingHarness, tx: SignedTransaction) => operationFailure(h.state, [], tx, nextEnv(h));

/** The dry-run's reason for an operation from key now (no nonce used). */
export const probe = (h: StakingHarness, k: KeyPair, body: unknown) => dryRunFailure(h, h.op(k, body, 10_000n, false));
