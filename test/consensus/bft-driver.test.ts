/**
 * BftEngine, the driver of the BFT core, on a real chain (RocksDB in a temp dir, real signatures) with an
 * injected manual Ticker: its timeouts and the proposal slot fire when the test moves the clock, never on
 * the wall clock. The test plays the three other validators by feeding their signed messages.
 */
import test, { type ExecutionContext } from 'ava';
import { type Block, type Chain, PRECOMMIT, PREVOTE, type Vote } from '../../ts/chain/index.js';
import { BftEngine, type ConsensusMessage, roundTimeouts } from '../../ts/consensus/bft.js';
import type { BlockBuilder, Ticker } from '../../ts/consensus/bft-options.js';
import type { Proposal } from '../../ts/consensus/messages.js';
import { SignGuard } from '../../ts/consensus/privval.js';
import { buildProposalBlock, signProposal, signVote } from '../../ts/consensus/proposing.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic } from '../../ts/ledger/index.js';
import { Mempool } from '../../ts/mempool/index.js';
import { fixtureParams, openFixtureChain } from '../helpers/chain-fixture.js';
import { tempDir, waitFor } from '../helpers/util.js';

const BLOCK_TIME_MS = 200;
const TIMEOUTS = roundTimeouts(BLOCK_TIME_MS);
/** Validators in proposer order: the proposer of (height, round) is SORTED[(height + round) % 4]. */
const SORTED: KeyPair[] = [50, 51, 52, 53]
  .map((i) => keyPairFromMnemonic(DEV_MNEMONIC, i))
  .sort((a, b) => (a.address < b.address ? -1 : 1));

/** Time moves only when the test says so; timers run in time order as it passes. */
class ManualTicker implements Ticker {
  private timers: { at: number; fn: () => void; every?: number }[] = [];

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + ms, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  every(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + ms, fn, every: ms };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = due.at;
      if (due.every) due.at += due.every;
      else this.timers = this.timers.filter((x) => x !== due);
      due.fn();
    }
    this.t = until;
  }
}

interface Setup {
  chain: Chain;
  engine: BftEngine;
  ticker: ManualTicker;
  sent: ConsensusMessage[];
  rounds: number[];
  finalized: (number | null)[];
  built: number;
  /** Blocks peers serve by hash (the fetchBlock option), and the requests made: [hash, peer]. */
  served: Map<string, Block>;
  fetched: [string, string][];
}

/** This validator is SORTED[me]; the clock starts `slotOffsetMs` after a block-time slot boundary. */
async function setup(t: ExecutionContext, me: number, slotOffsetMs = 0): Promise<Setup> {
  const tmp = tempDir();
  const { chain, db } = await openFixtureChain(tmp.dir, fixtureParams(SORTED));
  const ticker = new ManualTicker(1_000_000_000 + slotOffsetMs);
  const mempool = new Mempool();
  const s: Setup = {
    chain,
    engine: null as never,
    ticker,
    sent: [],
    rounds: [],
    finalized: [],
    built: 0,
    served: new Map(),
    fetched: [],
  };
  const fetchBlock = async (hash: string, from: string): Promise<Block | null> => {
    s.fetched.push([hash, from]);
    await new Promise((resolve) => setImmediate(resolve));
    return s.served.get(hash) ?? null;
  };
  const opts = { blockTimeMs: BLOCK_TIME_MS, maxBlockTxs: 100, ticker, fetchBlock };
  const builder: BlockBuilder = {
    build: async (round, current) => {
      const built = await buildProposalBlock(chain, mempool, SORTED[me], opts, round, current);
      s.built++;
      return built;
    },
  };
  s.engine = new BftEngine(chain, mempool, SORTED[me], { ...opts, builder }, new SignGuard(tmp.dir), (m) => s.sent.push(m));
  s.engine.observe({
    roundStarted: (_h, r) => s.rounds.push(r),
    finalized: (f) => s.finalized.push(f.proposalToFinalityMs),
  });
  t.teardown(async () => {
    await s.engine.stop();
    await chain.settled();
    await db.close();
    tmp.cleanup();
  });
  return s;
}

const votesSent = (s: Setup): Vote[] => s.sent.flatMap((m) => (m.kind === 'vote' ? [m.vote] : []));
const lastVote = (s: Setup): [number, number, string] | undefined => {
  const v = votesSent(s).at(-1);
  return v && [v.type, v.round, v.block_hash];
};

async function feedVotes(s: Setup, who: number[], type: Vote['type'], round: number, hash: string): Promise<void> {
  for (const i of who) {
    const vote = signVote(s.chain.params.chainId, SORTED[i], { type, height: 1, round, block_hash: hash });
    await s.engine.receive({ kind: 'vote', vote }, String(i));
  }
}

/** The proposal of (1, round) by its proposer, a block built on the same chain. */
async function proposalBy(s: Setup, round: number): Promise<Proposal> {
  const key = SORTED[(1 + round) % 4];
  const opts = { blockTimeMs: BLOCK_TIME_MS, maxBlockTxs: 100 };
  const built = await buildProposalBlock(s.chain, new Mempool(), key, opts, round, () => true);
  if (!built) throw new Error('no proposal block');
  return signProposal(s.chain.params.chainId, key, 1, round, -1, built.block);
}

test('timeouts fire on the injected ticker: nil prevote, nil precommit, next round; none on the wall clock', async (t) => {
  const s = await setup(t, 0);
  s.engine.start();
  t.deepEqual(s.rounds, [0]);
  s.ticker.advance(TIMEOUTS.proposeMs - 1);
  t.is(votesSent(s).length, 0, 'the propose timeout has not passed');
  s.ticker.advance(1);
  t.deepEqual(lastVote(s), [PREVOTE, 0, ''], 'nil prevote on the propose timeout, at once');
  await feedVotes(s, [1], PREVOTE, 0, '');
  await feedVotes(s, [2], PREVOTE, 0, 'ab'.repeat(32));
  t.deepEqual(lastVote(s), [PREVOTE, 0, ''], 'a split prevote quorum: wait for the prevote timeout');
  s.ticker.advance(TIMEOUTS.voteMs);
  t.deepEqual(lastVote(s), [PRECOMMIT, 0, ''], 'nil precommit on the prevote timeout');
  await feedVotes(s, [1, 2], PRECOMMIT, 0, '');
  s.ticker.advance(TIMEOUTS.voteMs - 1);
  t.is(s.engine.state.round, 0);
  s.ticker.advance(1);
  t.like(s.engine.state, { height: 1, round: 1, step: 'propose' });
  t.deepEqual(s.rounds, [0, 1]);
});

test('a proposal is checked on the chain, voted, decided and committed; finality time is the ticker’s', async (t) => {
  const s = await setup(t, 0);
  s.engine.start();
  const proposal = await proposalBy(s, 0);
  await s.engine.receive({ kind: 'proposal', proposal }, '1');
  const hash = proposal.block.hash;
  await waitFor(() => lastVote(s)?.[2] === hash, 30_000, 'prevote for the checked proposal');
  await feedVotes(s, [1, 2], PREVOTE, 0, hash);
  t.deepEqual(lastVote(s), [PRECOMMIT, 0, hash]);
  t.like(s.engine.state, { locked_round: 0, valid_round: 0 });
  s.ticker.advance(120);
  await feedVotes(s, [1, 2], PRECOMMIT, 0, hash);
  await waitFor(() => s.chain.height === 1, 30_000, 'block 1 committed');
  t.is(s.chain.head.hash, hash);
  t.true(s.chain.head.justification.length > 0, 'with its certificate');
  await waitFor(() => s.finalized.length === 1, 10_000, 'finalized reported');
  t.deepEqual(s.finalized, [120], 'from the proposal’s arrival to the commit, on the ticker');
  t.like(s.engine.state, { height: 2, round: 0, locked_round: -1 });
});

test('the proposer builds its block through the BlockBuilder at once and sends it at the slot boundary', async (t) => {
  // SORTED[1] proposes (1, 0); the clock is 50 ms into a slot: the proposal is due 150 ms later.
  const s = await setup(t, 1, 50);
  s.engine.start();
  t.is(s.built, 0, 'not in the tick that started the height');
  s.ticker.advance(0);
  // The build resolves without any time passing on the ticker; the proposal waits for the slot.
  await waitFor(() => s.built === 1, 30_000, 'block built');
  t.is(s.sent.filter((m) => m.kind === 'proposal').length, 0, 'not before the slot');
  s.ticker.advance(149);
  t.is(s.sent.filter((m) => m.kind === 'proposal').length, 0);
  s.ticker.advance(1);
  const proposals = s.sent.flatMap((m) => (m.kind === 'proposal' ? [m.proposal] : []));
  t.is(proposals.length, 1, 'sent at the slot boundary');
  t.like(proposals[0], { height: 1, round: 0, pol_round: -1 });
  t.is(proposals[0].block.validator, SORTED[1].address);
  // Its own proposal needs no check: the block is valid here (it executed it), so it prevotes at once.
  await waitFor(() => lastVote(s)?.[2] === proposals[0].block.hash, 10_000, 'own prevote');
});

test('a proposal by reference: the block is fetched from its sender, and receive resolves once it is taken in', async (t) => {
  const s = await setup(t, 0);
  s.engine.start();
  const { block, ...signed } = await proposalBy(s, 0);
  const ref = { ...signed, block_hash: block.hash };
  // A peer that does not have it: nothing is taken.
  await s.engine.receive({ kind: 'proposal_ref', ref }, 'peer-a');
  t.deepEqual(s.fetched, [[block.hash, 'peer-a']]);
  t.is(s.engine.proposalBlock(block.hash), null);
  s.served.set(block.hash, block);
  await s.engine.receive({ kind: 'proposal_ref', ref }, 'peer-b');
  t.deepEqual(s.fetched.at(-1), [block.hash, 'peer-b']);
  t.is(s.engine.proposalBlock(block.hash), block, 'taken in before receive resolved');
  await waitFor(() => lastVote(s)?.[2] === block.hash, 30_000, 'prevote for the fetched proposal');
  await s.engine.receive({ kind: 'proposal_ref', ref }, 'peer-c');
  t.is(s.fetched.length, 2, 'a round whose proposal is here fetches nothing');
});
