import test from 'ava';
import { consensusPhaseAt, validatorSetAt } from '../../ts/chain/index.js';
import type { KeyPair } from '../../ts/ledger/keys.js';
import {
  MIN_BFT_VALIDATORS,
  MIN_SELF_STAKE_BASE,
  SIGNED_BLOCKS_WINDOW,
  UNBONDING_EPOCHS,
  getActiveSet,
  getDelegation,
  getRatio,
  getSigningInfo,
  type RewardSegment,
  delegationRewardsByEpoch,
  getValidator,
  openSegments,
  pendingReward,
  segmentOfEvent,
  sharesValue,
  BASE_PER_COIN,
} from '../../ts/modules/index.js';
import { toHex } from '../../ts/util/index.js';
import {
  StakingHarness,
  dryRunFailure,
  nextEnv,
  probe,
  stakingParams,
  stakingPeople,
  stakingValidators,
  testKey,
} from '../helpers/staking-harness.js';
import { rng } from '../helpers/util.js';

const key = testKey;
const vals = stakingValidators;
const people = stakingPeople;
const COIN = BASE_PER_COIN;
const params = stakingParams;

const _envOf = nextEnv;
const failure = dryRunFailure;

test('genesis stakes start a network in DPoS with power = stake; operations succeed and each failure names its cause', async (t) => {
  const h = new StakingHarness(params());
  const set = validatorSetAt(h.params, h.state, 1);
  t.is(set.length, 4);
  t.deepEqual(set.map((v) => v.power).sort(), vals.map((_, i) => 20_000n * COIN + BigInt(i) * COIN).sort());
  const [alice, bob, carol] = people;
  const v0 = vals[0].address;
  const v1 = vals[1].address;

  // Failures known at admission (the dry-run's reason is the 400 message); none changes the state.
  const root = toHex(h.state.root());
  const dry = (k: KeyPair, body: unknown) => h.op(k, body, 10_000n, false);
  const cases: [ReturnType<StakingHarness['op']>, RegExp][] = [
    [
      dry(alice, { RegisterValidator: { name: 'a', stake: MIN_SELF_STAKE_BASE - 1n, commission_bps: 0 } }),
      /below the minimum self-stake/,
    ],
    [dry(alice, { Delegate: { validator: alice.address, amount: 5 } }), /unknown validator/],
    [dry(alice, { Undelegate: { validator: v0, amount: 5 } }), /exceeds the delegation of 0/],
    [dry(alice, { ClaimRewards: { validator: null } }), /^nothing to claim$/],
    [dry(alice, { ClaimRewards: { validator: v0 } }), /nothing to claim from/],
    [dry(alice, { UpdateCommission: { commission_bps: 10 } }), /unknown validator/],
    [dry(vals[0], { UpdateCommission: { commission_bps: 101 } }), /commission change too large: 0 -> 101/],
    [dry(vals[0], { Unjail: {} }), /not jailed/],
    [dry(alice, { Delegate: { validator: v0, amount: 10n ** 15n } }), /insufficient balance/],
    [dry(vals[0], { Undelegate: { validator: v0, amount: 6_000n * COIN } }), /self-stake would fall/],
    [
      dry(vals[0], { RegisterValidator: { name: 'again', stake: MIN_SELF_STAKE_BASE, commission_bps: 0 } }),
      /already a registered validator/,
    ],
  ];
  for (const [tx, re] of cases) t.regex(failure(h, tx) ?? 'accepted', re, tx.data);
  t.is(toHex(h.state.root()), root);

  // Successes.
  const h2 = new StakingHarness(params());
  await h2.block([
    h2.op(alice, { RegisterValidator: { name: 'alice', stake: MIN_SELF_STAKE_BASE, commission_bps: 500 } }),
    h2.op(bob, { Delegate: { validator: v0, amount: 1_000n * COIN } }),
    h2.op(carol, { Delegate: { validator: v1, amount: 2_000n * COIN } }),
  ]);
  t.is(getValidator(h2.state, alice.address)?.tokens, MIN_SELF_STAKE_BASE);
  t.is(sharesValue(getValidator(h2.state, v0)!, getDelegation(h2.state, bob.address, v0)!.shares), 1_000n * COIN);
  await h2.block([
    h2.op(bob, { Redelegate: { from_validator: v0, to_validator: v1, amount: 400n * COIN } }),
    h2.op(carol, { Undelegate: { validator: v1, amount: 500n * COIN } }),
    h2.op(vals[0], { UpdateCommission: { commission_bps: 100 } }),
  ]);
  t.regex(probe(h2, bob, { Redelegate: { from_validator: v0, to_validator: v1, amount: 1n } }) ?? '', /in flight until epoch/);
  t.regex(probe(h2, vals[0], { UpdateCommission: { commission_bps: 50 } }) ?? '', /already changed in epoch 0/);
  t.regex(
    probe(h2, carol, { Undelegate: { validator: v1, amount: 1_501n * COIN } }) ?? '',
    /exceeds the delegation of 150000000000/,
  );
  // alice joins the active set at the next epoch boundary.
  t.false(getActiveSet(h2.state)?.members.some((m) => m.address === alice.address));
  while (h2.height < 10) await h2.block();
  t.true(getActiveSet(h2.state)?.members.some((m) => m.address === alice.address));
  // Rewards accrue (reward v2 from 0): bob claims from v1, carol's unbonding matures after UNBONDING_EPOCHS.
  const pending = pendingReward(getValidator(h2.state, v1)!, getDelegation(h2.state, bob.address, v1)!);
  t.true(pending > 0n);
  await h2.block([h2.op(bob, { ClaimRewards: { validator: v1 } })]);
  const after = pendingReward(getValidator(h2.state, v1)!, getDelegation(h2.state, bob.address, v1)!);
  t.true(after < pending, "only the claim block's own reward is pending after the claim");
  t.true((getRatio(h2.state, v1, 0) ?? 0n) > 0n, 'epoch 0 ratio checkpoint');
});

test('supply invariant after every block across reward-v2 and tokenomics-v2, with many delegators, a jailing and a double sign', async (t) => {
  // The whale brings the supply within 60 coins of 210M: the reward stops at the cap until tokenomics-v2.
  const whale = key(30);
  // Five validators: downtime jailing never takes a set of MIN_BFT_VALIDATORS (4) below that floor.
  const fifth = key(24);
  const base = params({ rewardV2: 40, tokenomicsV2: 160 }, [], 10, [...vals, fifth]);
  let minted = 0n;
  for (const v of base.alloc.values()) minted += v;
  for (const v of base.validators) minted += v.stake ?? 0n;
  base.alloc.set(whale.address, 210_000_000n * COIN - minted - 60n * COIN);
  const h = new StakingHarness(base);
  const random = rng(7);
  const v = vals.map((k) => k.address);
  const down = v[3];
  let sawCap = false;
  for (let b = 1; b <= 260; b++) {
    const txs = [];
    if (b % 3 === 0) {
      const who = people[Math.floor(random() * people.length)];
      const to = v[Math.floor(random() * 3)];
      const choice = random();
      const d = getDelegation(h.state, who.address, to);
      let body: unknown;
      if (choice < 0.5 || !d) body = { Delegate: { validator: to, amount: BigInt(1 + Math.floor(random() * 1000)) * COIN } };
      else if (choice < 0.7)
        body = { Undelegate: { validator: to, amount: sharesValue(getValidator(h.state, to)!, d.shares) / 3n + 1n } };
      else if (choice < 0.85) body = { ClaimRewards: { validator: null } };
      else body = { Redelegate: { from_validator: to, to_validator: v[(v.indexOf(to) + 1) % 3], amount: 1n * COIN } };
      if (probe(h, who, body) === null) txs.push(h.op(who, body));
    }
    // Every active validator but `down` signs (DPoS+BFT last commit).
    const active = getActiveSet(h.state)?.members.map((m) => m.address) ?? [];
    // Block 200 includes double-sign evidence against v[2] for height 195.
    const r = await h.block(txs, {
      lastCommit: active.filter((a) => a !== down),
      doubleSigns: b === 200 ? [{ validator: v[2], height: 195 }] : [],
    });
    if (b > 60 && b < 160) sawCap ||= r.rewardBase === 0n;
    const { held, issued, parts } = h.supplyCheck();
    t.is(held, issued, `block ${b}: ${JSON.stringify(parts, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}`);
    if (held !== issued) break;
  }
  t.true(sawCap, 'the reward stopped at the 210M cap before tokenomics-v2');
  t.is(getValidator(h.state, down)?.status, 'jailed', `missing more than half of a ${SIGNED_BLOCKS_WINDOW}-record window jails`);
  t.false(getActiveSet(h.state)?.members.some((m) => m.address === down));
  t.true(getValidator(h.state, down)!.tokens < 20_003n * COIN, 'slashed for downtime');
  t.is(getValidator(h.state, v[2])?.status, 'tombstoned');
  t.regex(probe(h, vals[2], { Unjail: {} }) ?? '', /tombstoned/);
  t.regex(probe(h, people[0], { Delegate: { validator: down, amount: 1 } }) ?? '', /is jailed/);
  // The jailed validator may unjail once its jail epoch has passed.
  t.is(probe(h, vals[3], { Unjail: {} }), null);
  void UNBONDING_EPOCHS;
});

test('downtime jailing never takes a set of four below the BFT floor: the absent validator misses and stays, the chain keeps BFT', async (t) => {
  const h = new StakingHarness(params());
  const down = vals[3].address;
  for (let b = 1; b <= 2 * SIGNED_BLOCKS_WINDOW; b++) {
    const active = getActiveSet(h.state)?.members.map((m) => m.address) ?? [];
    await h.block([], { lastCommit: active.filter((a) => a !== down) });
  }
  t.is(getValidator(h.state, down)?.status, 'bonded');
  t.is(getActiveSet(h.state)?.members.length, MIN_BFT_VALIDATORS);
  t.is(consensusPhaseAt(h.params, h.state, h.height + 1), 'DPoS+BFT');
  const info = getSigningInfo(h.state, down);
  t.true(info.missed > SIGNED_BLOCKS_WINDOW / 2, `misses stay recorded: ${info.missed}`);
  t.is(info.signed_total, 0);
});

test("F1: every delegator's rewards, in all and per epoch, equal a naive per-block pro-rata reference to the base unit over thousands of blocks", async (t) => {
  const EPOCH = 50;
  const h = new StakingHarness(params({}, [], EPOCH));
  // Reward history inputs: the payments recorded in receipts, per delegator; the reference per pair and epoch.
  const segments = new Map<string, RewardSegment[]>();
  const refByEpoch = new Map<string, bigint>();
  const random = rng(42);
  const v = vals.map((k) => k.address);
  const pairs = new Set<string>(v.map((a) => `${a}|${a}`));
  const paid = new Map<string, bigint>();
  const ref = new Map<string, bigint>();
  const S = 10n ** 30n;
  const add = (m: Map<string, bigint>, k: string, x: bigint) => m.set(k, (m.get(k) ?? 0n) + x);
  const pending = (d: string, va: string): bigint => {
    const del = getDelegation(h.state, d, va);
    return del ? pendingReward(getValidator(h.state, va)!, del) : 0n;
  };
  let ops = 0;
  for (let b = 1; b <= 2500; b++) {
    const txs = [];
    const settled: [string, string][] = [];
    if (random() < 0.3) {
      const who = people[Math.floor(random() * people.length)];
      const va = v[Math.floor(random() * v.length)];
      const other = v[(v.indexOf(va) + 1 + Math.floor(random() * 3)) % v.length];
      const d = getDelegation(h.state, who.address, va);
      const x = random();
      let body: unknown;
      if (x < 0.45 || !d) {
        body = {
          Delegate: {
            validator: va,
            amount: BigInt(1 + Math.floor(random() * 5_000)) * COIN + BigInt(Math.floor(random() * 1e8)),
          },
        };
        settled.push([who.address, va]);
      } else if (x < 0.65) {
        body = {
          Undelegate: {
            validator: va,
            amount: (sharesValue(getValidator(h.state, va)!, d.shares) * BigInt(1 + Math.floor(random() * 100))) / 100n,
          },
        };
        settled.push([who.address, va]);
      } else if (x < 0.85) {
        body = {
          Redelegate: {
            from_validator: va,
            to_validator: other,
            amount: sharesValue(getValidator(h.state, va)!, d.shares) / 2n + 1n,
          },
        };
        settled.push([who.address, va], [who.address, other]);
      } else {
        body = { ClaimRewards: { validator: null } };
        for (const va2 of v) settled.push([who.address, va2]);
      }
      if (probe(h, who, body) === null) {
        txs.push(h.op(who, body));
        for (const [d2, va2] of settled) {
          add(paid, `${d2}|${va2}`, pending(d2, va2));
          pairs.add(`${d2}|${va2}`);
        }
        ops++;
      }
    }
    const before = new Map(v.map((a) => [a, getValidator(h.state, a)!.rewards_total]));
    const r = await h.block(txs);
    for (const receipt of r.receipts)
      for (const e of receipt.events ?? []) {
        const seg = segmentOfEvent(e);
        if (seg) segments.set(e.fields.delegator, [...(segments.get(e.fields.delegator) ?? []), seg]);
      }
    const epoch = Math.floor(h.height / EPOCH);
    for (const a of v) {
      const val = getValidator(h.state, a)!;
      const delta = val.rewards_total - (before.get(a) ?? 0n);
      if (delta === 0n) continue;
      for (const pair of pairs) {
        const [d, va] = pair.split('|');
        if (va !== a) continue;
        const del = getDelegation(h.state, d, a);
        if (!del) continue;
        add(ref, pair, (delta * del.shares * S) / val.shares);
        add(refByEpoch, `${pair}|${epoch}`, (delta * del.shares * S) / val.shares);
      }
    }
  }
  let worst = 0n;
  for (const pair of pairs) {
    const [d, va] = pair.split('|');
    const f1 = (paid.get(pair) ?? 0n) + pending(d, va);
    const naive = (ref.get(pair) ?? 0n) / S;
    t.true(f1 <= naive + 1n, `${pair}: F1 ${f1} never above the reference ${naive}`);
    const diff = naive - f1;
    if (diff > worst) worst = diff;
    t.true(diff < 10_000_000_000n, `${pair}: F1 ${f1} vs reference ${naive} (wei) differ by less than one base unit`);
  }
  t.true(ops > 500, `${ops} delegation changes`);
  t.log(`pairs ${pairs.size}, operations ${ops}, worst shortfall ${worst} wei`);

  // The reward history: per pair and epoch, the F1 split of every segment (paid ones from the receipts'
  // events, the open ones from state) against the per-block reference of that epoch; claimed rows add up
  // to exactly what was paid, unclaimed ones to exactly what is pending.
  const current = Math.floor(h.height / EPOCH);
  let worstEpoch = 0n;
  let rows = 0;
  for (const d of new Set([...pairs].map((p) => p.split('|')[0]))) {
    const history = delegationRewardsByEpoch(
      h.state,
      [...(segments.get(d) ?? []), ...openSegments(h.state, d)],
      0,
      current,
      current,
    );
    rows += history.length;
    for (const va of v) {
      const pair = `${d}|${va}`;
      const mine = history.filter((x) => x.validator === va);
      const sum = (claimed: boolean) => mine.filter((x) => x.claimed === claimed).reduce((a, x) => a + x.reward, 0n);
      t.is(sum(true), paid.get(pair) ?? 0n, `${pair}: claimed rows = rewards paid`);
      t.is(sum(false), pending(d, va), `${pair}: unclaimed rows = pending rewards`);
      for (let e = 0; e <= current; e++) {
        const f1 = mine.filter((x) => x.epoch === e).reduce((a, x) => a + x.reward, 0n);
        const naive = (refByEpoch.get(`${pair}|${e}`) ?? 0n) / S;
        t.true(f1 <= naive + 1n, `${pair} epoch ${e}: F1 ${f1} never above the reference ${naive}`);
        if (naive - f1 > worstEpoch) worstEpoch = naive - f1;
        if (naive - f1 >= 10_000_000_000n) t.fail(`${pair} epoch ${e}: F1 ${f1} vs reference ${naive} (wei)`);
      }
    }
  }
  t.true(rows > 500, `${rows} history rows`);
  t.log(`history rows ${rows}, epochs ${current + 1}, worst per-epoch shortfall ${worstEpoch} wei`);
});
