/**
 * Four BFT engines on four real chains (RocksDB in temp dirs, real signatures), wired by an in-process
 * network that passes every message through its wire encoding and can drop messages per receiver. Every
 * validator is stopped mid-height and started again from its data dir only (chain and sign state), the
 * way a killed node restarts: what it was locked on must come back with its block.
 */
import test, { type ExecutionContext } from 'ava';
import { decodeBlock, encodeBlock, type Chain, PRECOMMIT, PREVOTE, decodeJustification } from '../../ts/chain/index.js';
import { BftEngine, type ConsensusMessage } from '../../ts/consensus/bft.js';
import { decodeConsensusMessage, encodeConsensusMessage } from '../../ts/consensus/messages.js';
import { SignGuard } from '../../ts/consensus/privval.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic } from '../../ts/ledger/index.js';
import { Mempool } from '../../ts/mempool/index.js';
import type { KvStore } from '../../ts/storage/index.js';
import { fixtureParams, openFixtureChain } from '../helpers/chain-fixture.js';
import { tempDir, waitFor } from '../helpers/util.js';

const BLOCK_TIME_MS = 200;

interface Member {
  key: KeyPair;
  dir: string;
  chain: Chain;
  db: KvStore;
  guard: SignGuard;
  engine: BftEngine;
  /** Conflicting votes this member's engine saw (double signs). */
  evidence: number;
}

/** Whether a message from validator `from` reaches validator `to` (index into the members). */
type Link = (from: number, to: number, m: ConsensusMessage) => boolean;

class TestNetwork {
  members: Member[] = [];
  link: Link = () => true;
  private readonly cleanups: (() => void)[] = [];

  constructor(readonly keys: KeyPair[]) {}

  /** The validators in proposer order: the proposer of (height, round) is sorted[(height + round) % 4]. */
  get sorted(): number[] {
    return this.keys.map((_, i) => i).sort((a, b) => (this.keys[a].address < this.keys[b].address ? -1 : 1));
  }

  async open(): Promise<void> {
    const params = fixtureParams(this.keys);
    for (const key of this.keys) {
      const tmp = tempDir();
      this.cleanups.push(tmp.cleanup);
      const { chain, db } = await openFixtureChain(tmp.dir, params);
      this.members.push({ key, dir: tmp.dir, chain, db, guard: new SignGuard(tmp.dir), engine: null as never, evidence: 0 });
    }
  }

  /** (Re)start member i's engine from its data dir's sign state, as a restarted process would. */
  start(i: number): void {
    const m = this.members[i];
    m.guard = new SignGuard(m.dir);
    m.engine = new BftEngine(
      m.chain,
      new Mempool(),
      m.key,
      {
        blockTimeMs: BLOCK_TIME_MS,
        maxBlockTxs: 100,
        fetchBlock: async (hash, from) => {
          const b = this.members[Number(from)]?.engine.proposalBlock(hash);
          return b ? decodeBlock(encodeBlock(b)) : null;
        },
      },
      m.guard,
      (msg) => this.broadcast(i, msg),
    );
    m.engine.observe({
      evidence: () => m.evidence++,
      // A decided block reaches the validators that lack it, as the node's block gossip and sync do.
      committed: (b) => {
        for (const other of this.members)
          if (other !== m && other.chain.height === b.index - 1)
            void other.chain.importBlock(decodeBlock(encodeBlock(b))).catch(() => undefined);
      },
    });
    m.engine.start();
  }

  private broadcast(from: number, msg: ConsensusMessage): void {
    const bytes = encodeConsensusMessage(msg);
    this.members.forEach((to, i) => {
      if (i === from || !this.link(from, i, msg)) return;
      setImmediate(() => void to.engine.receive(decodeConsensusMessage(bytes), String(from)).catch(() => undefined));
    });
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.members.map((m) => m.engine.stop()));
  }

  async close(): Promise<void> {
    await this.stopAll();
    for (const m of this.members) {
      await m.chain.settled();
      await m.db.close();
    }
    for (const c of this.cleanups) c();
  }
}

function keys(from: number): KeyPair[] {
  return [0, 1, 2, 3].map((i) => keyPairFromMnemonic(DEV_MNEMONIC, from + i));
}

const isVote = (m: ConsensusMessage, type: number) => m.kind === 'vote' && m.vote.type === type;

/** Every member reaches height 1 with one block, that block. */
async function assertDecided(t: ExecutionContext, net: TestNetwork, hash: string): Promise<void> {
  await waitFor(() => net.members.every((m) => m.chain.height >= 1), 60_000, 'height 1 decided on all four').catch((err) => {
    t.log(net.members.map((m) => JSON.stringify({ head: m.chain.height, ...m.engine.state, guard: m.guard.last })).join('\n'));
    throw err;
  });
  for (const m of net.members) {
    const b = await m.chain.blocks.getBlock(1);
    t.is(b?.hash, hash, `${m.key.address} committed the block the validators were locked on`);
    t.true((b?.justification.length ?? 0) > 0, 'with its commit certificate');
  }
  t.deepEqual(
    net.members.map((m) => m.evidence),
    [0, 0, 0, 0],
    'no validator signed two different votes at one position',
  );
}

/**
 * A network whose height 1 runs round 0 under `link` until the `lockers` are locked on one block (and
 * `ready` holds), then is killed and restarted fully connected: returns the block hash they were locked on.
 */
async function restartWhenLocked(
  t: ExecutionContext,
  net: TestNetwork,
  link: Link,
  lockers: number[],
  ready: () => boolean = () => true,
): Promise<string> {
  t.teardown(() => net.close());
  await net.open();
  net.link = link;
  for (let i = 0; i < 4; i++) net.start(i);
  const locks = await waitFor(
    () => {
      const l = lockers.map((i) => net.members[i].guard.last.lock);
      return l.every((x) => x) && ready() ? l : null;
    },
    30_000,
    `${lockers.length} validators locked`,
  );
  const hash = locks[0]?.block_hash as string;
  t.true(
    locks.every((l) => l?.block_hash === hash),
    'locked on one block',
  );
  t.is(net.members[0].chain.height, 0, 'nothing decided before the restart');
  // Killed: only the data dirs survive (proposals and votes received are gone). All restart, connected.
  await net.stopAll();
  net.link = () => true;
  for (let i = 0; i < 4; i++) net.start(i);
  return hash;
}

test.serial(
  'all four restart mid-height, two of them locked on a block nobody else kept: the height is decided with it',
  async (t) => {
    t.timeout(120_000);
    const net = new TestNetwork(keys(12));
    // The two validators proposing last in the first rounds after the restart are the locked ones, so the
    // first proposal after the restart is a fresh block from an unlocked validator (the locked ones refuse it).
    const sorted = net.sorted;
    const locked = [sorted[3], sorted[0]];
    const unlocked = [sorted[1], sorted[2]];
    // Round 0: everyone gets the proposal and prevotes for it; only the locked two see the prevotes (they
    // lock and precommit), nobody sees a precommit quorum.
    const hash = await restartWhenLocked(
      t,
      net,
      (_from, to, m) => m.kind !== 'vote' || (locked.includes(to) && isVote(m, PREVOTE)),
      locked,
      () => unlocked.every((i) => net.members[i].guard.last.step === 2),
    );
    await assertDecided(t, net, hash);
  },
);

test.serial(
  'all four restart after three precommitted a block nobody saw decided: it is decided from the kept block',
  async (t) => {
    t.timeout(120_000);
    const net = new TestNetwork(keys(16));
    // Every prevote reaches everyone; precommits reach no one, and the fourth validator sees no prevote (it
    // does not lock). Three precommits exist, a quorum that no validator has seen.
    const last = net.sorted[3];
    const hash = await restartWhenLocked(
      t,
      net,
      (_from, to, m) => !isVote(m, PRECOMMIT) && (to !== last || m.kind !== 'vote'),
      [0, 1, 2, 3].filter((i) => i !== last),
    );
    await assertDecided(t, net, hash);
    // The precommits sent again after the restart are the certificate: decided in round 0.
    const b = await net.members[0].chain.blocks.getBlock(1);
    t.is(decodeJustification(b?.justification ?? new Uint8Array(0)).round, 0);
  },
);
