/**
 * Tokens and staking in block execution (`npm run bench:staking`): SRC-20 transfers per second (execute +
 * state root, as the native transfer row), block time with 10 vs 10,000 delegators on one validator (the
 * F1 distribution never loops over delegators), and the cost of one ClaimRewards against the number of
 * delegators of its validator.
 */
import { applyGenesisAlloc } from '../ts/chain/genesis-state.js';
import { type ChainParams, ledgerParams } from '../ts/chain/params.js';
import { validatorSetAt } from '../ts/chain/schedule.js';
import { executeBlock } from '../ts/execution/index.js';
import { type KeyPair, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { checkNativeTransaction, markSignatureVerified, operationActivation } from '../ts/ledger/rules.js';
import {
  getTotals,
  getValidator,
  putDelegation,
  putTotals,
  putValidator,
  stakingModule,
  putToken,
  putTokenBalance,
  tokenContractAddress,
} from '../ts/modules/index.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { BASE_PER_COIN, ZERO_ADDRESS } from '../ts/modules/kit/units.js';
import { StateOverlay, StateStore } from '../ts/state/state-store.js';
import { toHex } from '../ts/util/hex.js';

export interface Row {
  name: string;
  value: string;
  note: string;
}

const key = (i: number): KeyPair => keyPairFromPrivate((BigInt(i) + 1n).toString(16).padStart(64, '0'));
const COIN = BASE_PER_COIN;

function chainParams(validators: KeyPair[], funded: KeyPair[], stake = 0n): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: 1_700_000_000,
    activation: { dposBft: 0, evm: 1_000_000_000, rewardV2: 0, tokenomicsV2: 0, nft: 1_000_000_000 },
    validators: validators.map((k, i) => ({
      address: k.address,
      public_key: toHex(k.publicKey),
      name: `v${i}`,
      ...(stake ? { stake } : {}),
    })),
    alloc: new Map(funded.map((k) => [k.address, 1_000_000n * COIN])),
    evmHardfork: 'prague',
    epochLength: 1_000_000,
  };
}

function genesis(params: ChainParams): StateStore {
  const state = new StateStore();
  const g = new StateOverlay(state);
  applyGenesisAlloc(params, g);
  state.applyChanges(g.changes);
  state.root();
  return state;
}

function envAt(params: ChainParams, state: StateStore, height: number) {
  const set = validatorSetAt(params, state, height);
  return {
    height,
    timestamp: params.genesisTimestamp + height,
    proposer: set[height % set.length].address,
    chainId: params.chainId,
    hardfork: params.evmHardfork,
    tokenomicsV2Height: params.activation.tokenomicsV2,
    evmActivationHeight: params.activation.evm,
    ledger: ledgerParams(params),
    blockHash: async () => null,
  };
}

/** Execute and apply one block; returns execute and state-root milliseconds. */
async function runBlock(params: ChainParams, state: StateStore, height: number, txs: SignedTransaction[]) {
  const t0 = performance.now();
  const overlay = new StateOverlay(state);
  const r = await executeBlock(envAt(params, state, height), overlay, state, txs);
  const t1 = performance.now();
  state.applyChanges(overlay.changes);
  state.root();
  const t2 = performance.now();
  if (r.dropped.length) throw new Error(`dropped: ${r.dropped[0].reason}`);
  return { executeMs: t1 - t0, rootMs: t2 - t1, receipts: r.receipts };
}

/** What admission does before the pool (rules, signatures), so execution sees the transactions as a node does. */
function admitted(params: ChainParams, txs: SignedTransaction[]): void {
  const rules = {
    chainId: params.chainId,
    height: 1,
    now: params.genesisTimestamp + 10,
    operations: operationActivation(ledgerParams(params)),
  };
  for (const tx of txs) {
    checkNativeTransaction(tx, rules);
    markSignatureVerified(tx);
  }
}

export async function benchTokenTransfers(senders = 2000, perSender = 5, rounds = 5): Promise<Row[]> {
  const v = key(1_000_000);
  const keys = Array.from({ length: senders }, (_, i) => key(i));
  const params = chainParams([v], keys);
  const state = genesis(params);
  const contract = tokenContractAddress(keys[0].address, 0n);
  const setup = new StateOverlay(state);
  putToken(setup, {
    contract,
    name: 'Bench',
    symbol: 'BEN',
    decimals: 0,
    supply: BigInt(senders) * 1_000_000n,
    max_supply: 0n,
    owner: keys[0].address,
    deployed_at_height: 0,
  });
  for (const k of keys) putTokenBalance(setup, contract, k.address, 0n, 1_000_000n);
  state.applyChanges(setup.changes);
  state.root();
  const txs: SignedTransaction[] = [];
  for (let n = 0; n < perSender; n++)
    keys.forEach((k, i) =>
      txs.push(
        signTransaction(
          {
            from: k.address,
            to: ZERO_ADDRESS,
            amount: 0n,
            fee: 10_000n,
            nonce: BigInt(n),
            data: JSON.stringify({ Transfer: { contract, to: keys[(i + 1) % senders].address, amount: 7 } }),
            chain_id: 7120,
            timestamp: params.genesisTimestamp,
          },
          k,
        ),
      ),
    );
  admitted(params, txs);
  // The same senders' native transfers first, in the same process, as the reference row.
  const native = keys.map((k, i) =>
    signTransaction(
      {
        from: k.address,
        to: keys[(i + 1) % senders].address,
        amount: 7n,
        fee: 10_000n,
        nonce: 0n,
        chain_id: 7120,
        timestamp: params.genesisTimestamp,
      },
      k,
    ),
  );
  const natives: SignedTransaction[] = [];
  for (let n = 0; n < perSender; n++)
    natives.push(
      ...native.map((tx) =>
        signTransaction(
          {
            from: tx.from_address,
            to: tx.to_address,
            amount: 7n,
            fee: 10_000n,
            nonce: BigInt(n),
            chain_id: 7120,
            timestamp: params.genesisTimestamp,
          },
          keys[native.indexOf(tx)],
        ),
      ),
    );
  admitted(params, natives);
  // Each block on a copy of its start state, alternately, after one untimed round of each (JIT warm-up);
  // medians of `rounds` runs.
  const nativeState = genesis(params);
  const again = async (st: StateStore, list: SignedTransaction[]) => {
    const overlay = new StateOverlay(st);
    const t0 = performance.now();
    const res = await executeBlock(envAt(params, st, 1), overlay, st, list);
    const t1 = performance.now();
    const undo = st.applyChanges(overlay.changes);
    st.root();
    const t2 = performance.now();
    st.revert(undo);
    st.root();
    return { executeMs: t1 - t0, rootMs: t2 - t1, receipts: res.receipts };
  };
  const runsOf = { native: [] as Awaited<ReturnType<typeof again>>[], token: [] as Awaited<ReturnType<typeof again>>[] };
  for (let i = -1; i < rounds; i++) {
    const n = await again(nativeState, natives);
    const tk = await again(state, txs);
    if (i < 0) continue;
    runsOf.native.push(n);
    runsOf.token.push(tk);
  }
  const mid = (xs: Awaited<ReturnType<typeof again>>[]) =>
    [...xs].sort((a, b) => a.executeMs + a.rootMs - b.executeMs - b.rootMs)[Math.floor((xs.length - 1) / 2)];
  const nr = mid(runsOf.native);
  const r = mid(runsOf.token);
  const ok = r.receipts.filter((x) => x.status === 1).length;
  return [
    {
      name: `block execution: ${natives.length.toLocaleString()} native transfers, same run (execute + state root)`,
      value: `${Math.round(natives.length / ((nr.executeMs + nr.rootMs) / 1000)).toLocaleString()} tx/s`,
      note: `execute ${nr.executeMs.toFixed(0)} ms, state root ${nr.rootMs.toFixed(0)} ms; median of ${rounds} (reference for the row below)`,
    },
    {
      name: `block execution: ${txs.length.toLocaleString()} SRC-20 transfers (execute + state root)`,
      value: `${Math.round(txs.length / ((r.executeMs + r.rootMs) / 1000)).toLocaleString()} tx/s`,
      note: `execute ${r.executeMs.toFixed(0)} ms, state root ${r.rootMs.toFixed(0)} ms; median of ${rounds}; ${ok} status 1; goal ≥ 50k/s`,
    },
  ];
}

/** A staked chain whose first validator has `delegators` delegations (written straight into state). */
function stakedState(delegators: number) {
  const vals = [0, 1, 2, 3].map((i) => key(2_000_000 + i));
  const params = chainParams(vals, [], 20_000n * COIN);
  const state = genesis(params);
  const setup = new StateOverlay(state);
  const v = getValidator(setup, vals[0].address);
  if (!v) throw new Error('no validator');
  // Delegators need no keys here: only their addresses enter state (claims are timed as operations).
  const people = Array.from({ length: delegators }, (_, i) => `0x${(0xd0000000 + i).toString(16).padStart(40, '0')}`);
  for (const p of people) {
    const amount = 100n * COIN;
    putDelegation(setup, p, v.address, { shares: amount, start_acc: 0n, since_epoch: 0 });
    v.shares += amount;
    v.tokens += amount;
  }
  putValidator(setup, v);
  const totals = getTotals(setup);
  totals.bonded += BigInt(delegators) * 100n * COIN;
  putTotals(setup, totals);
  state.applyChanges(setup.changes);
  state.root();
  return { params, state, people };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchDelegators(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of [10, 10_000]) {
    const { params, state } = stakedState(n);
    const times: number[] = [];
    for (let h = 1; h <= 30; h++) {
      const r = await runBlock(params, state, h, []);
      times.push(r.executeMs + r.rootMs);
    }
    rows.push({
      name: `block processing with ${n.toLocaleString()} delegators on one validator (empty block, reward distribution v2)`,
      value: `${median(times).toFixed(2)} ms`,
      note: 'median of 30 blocks (execute + state root); goal: the same for 10 and 10,000',
    });
  }
  return rows;
}

export async function benchClaims(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of [10, 1_000, 100_000]) {
    const { params, state, people } = stakedState(n);
    await runBlock(params, state, 1, []); // rewards accrue
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const tx = { from_address: people[i % people.length] } as SignedTransaction;
      // The claimant pays no fee here (it has no balance): time the operation itself on a scratch overlay.
      const overlay = new StateOverlay(state);
      const t0 = performance.now();
      stakingModule.handlers.ClaimRewards({
        state: overlay,
        tx,
        op: { name: 'ClaimRewards', family: 'staking', fields: { validator: null } },
        env: { ...envAt(params, state, 2) },
        emit: () => {},
      });
      times.push(performance.now() - t0);
    }
    rows.push({
      name: `ClaimRewards with ${n.toLocaleString()} delegators on the validator`,
      value: `${(median(times) * 1000).toFixed(0)} µs`,
      note: 'median of 15 claims (the operation on a scratch overlay); goal: flat in the number of delegators',
    });
  }
  return rows;
}

const isMain = process.argv[1]?.endsWith('staking.js');
if (isMain) {
  const rows = [...(await benchTokenTransfers()), ...(await benchDelegators()), ...(await benchClaims())];
  for (const r of rows) console.log(`| ${r.name} | ${r.value} | ${r.note} |`);
}
