/**
 * Gossip validation of the consensus topic on a real chain (RocksDB, real signatures): what is ACCEPTed
 * (and handed to the engine), IGNOREd (and held for later, within bounds) or REJECTed (thrown).
 */
import { RLP } from '@ethereumjs/rlp';
import test from 'ava';
import {
  type Block,
  type Chain,
  PRECOMMIT,
  PREVOTE,
  type Vote,
  encodeJustification,
  voteDigest,
  proposerAt,
  doubleSignEvidence,
  encodeEvidence,
} from '../../ts/chain/index.js';
import {
  ConsensusGossip,
  FUTURE_HEIGHTS,
  PROPOSAL_ROUNDS_AHEAD,
  VOTE_ROUNDS_AHEAD,
  futurePerPeer,
} from '../../ts/consensus/consensus-gossip.js';
import { EvidencePool, InvalidEvidenceError } from '../../ts/consensus/evidence-pool.js';
import { type ConsensusMessage, InvalidConsensusMessage, encodeConsensusMessage } from '../../ts/consensus/messages.js';
import { type KeyPair, keyPairFromMnemonic, signDigest } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { NOW, fixtureParams, openFixtureChain } from '../helpers/chain-fixture.js';
import { tempDir, waitFor } from '../helpers/util.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const keys = [4, 5, 6, 7].map((i) => keyPairFromMnemonic(MNEMONIC, i));
const outsider = keyPairFromMnemonic(MNEMONIC, 3);
const params = fixtureParams(keys); // dev activation: DPoS+BFT from height 1 with four validators

function vote(height: number, key: KeyPair, round = 0, type: Vote['type'] = PREVOTE, hash = 'ab'.repeat(32)): ConsensusMessage {
  const body = { type, height, round, block_hash: hash };
  const signature = toHex(signDigest(voteDigest(params.chainId, body), key.privateKey));
  return { kind: 'vote', vote: { ...body, validator: key.address, signature } };
}

const forged = (m: ConsensusMessage): ConsensusMessage =>
  m.kind === 'vote' ? { kind: 'vote', vote: { ...m.vote, signature: `${m.vote.signature.slice(0, 126)}00` } } : m;

const wire = (m: ConsensusMessage): Uint8Array => encodeConsensusMessage(m);

/** Commit the next block on the chain with three precommits (what a decided BFT height leaves). */
async function commitNext(chain: Chain): Promise<Block> {
  const h = chain.height + 1;
  const proposer = keys.find((k) => k.address === proposerAt(params, chain.state, h, 0)?.address) as KeyPair;
  const head = chain.head;
  const exec = await chain.execute([], proposer.address, NOW, undefined, {
    last_commit: head.consensus === 'DPoS+BFT' ? head.justification : new Uint8Array(0),
    evidence: [],
  });
  const sealed = chain.seal(exec, proposer, 0, { proposal: true });
  chain.abandon(sealed);
  const b = sealed.block;
  const precommits = keys
    .slice(0, 3)
    .map((k) => {
      const body = { type: PRECOMMIT, height: b.index, round: 0, block_hash: b.hash } as const;
      return { validator: k.address, signature: toHex(signDigest(voteDigest(params.chainId, body), k.privateKey)) };
    })
    .sort((x, y) => (x.validator < y.validator ? -1 : 1));
  const final = { ...b, justification: encodeJustification({ round: 0, precommits }) };
  await chain.importBlock(final);
  return final;
}

/** A fixture chain of the four validators in a temp dir, closed and removed after the test. */
async function openChain(t: import('ava').ExecutionContext): Promise<Chain> {
  const tmp = tempDir();
  const { chain, db } = await openFixtureChain(tmp.dir, params);
  t.teardown(async () => {
    await db.close();
    tmp.cleanup();
  });
  return chain;
}

async function setup(t: import('ava').ExecutionContext) {
  const chain = await openChain(t);
  const received: { m: ConsensusMessage; from: string }[] = [];
  const gossip = new ConsensusGossip(chain, () => ({ receive: async (m, from) => void received.push({ m, from }) }));
  return { chain, gossip, received };
}

test('a message of the height being decided is accepted once its signer and signature check out', async (t) => {
  const { chain, gossip, received } = await setup(t);
  t.is(chain.consensusAt(1), 'DPoS+BFT');
  t.is(await gossip.validate(wire(vote(1, keys[0])), 'peer-a'), 'accept');
  t.is(received.length, 1);
  await t.throwsAsync(gossip.validate(wire(forged(vote(1, keys[1]))), 'peer-a'), { instanceOf: InvalidConsensusMessage });
  await t.throwsAsync(gossip.validate(wire(vote(1, outsider)), 'peer-a'), {
    instanceOf: InvalidConsensusMessage,
    message: /not a validator/,
  });
  const ref: ConsensusMessage = {
    kind: 'proposal_ref',
    ref: { height: 1, round: 0, pol_round: -1, block_hash: 'cd'.repeat(32), signature: '11'.repeat(64) },
  };
  await t.throwsAsync(gossip.validate(wire(ref), 'peer-a'), { instanceOf: InvalidConsensusMessage, message: /not signed/ });
  t.is(received.length, 1, 'nothing refused reached the engine');
});

test('re-encoded variants of a real vote are refused: one vote, one encoding', async (t) => {
  const { gossip } = await setup(t);
  const m = vote(1, keys[0]);
  if (m.kind !== 'vote') throw new Error('a vote');
  const variants = [JSON.stringify(m.vote, null, 1), JSON.stringify({ ...m.vote, extra: 1 }), `${JSON.stringify(m.vote)} `];
  for (const v of variants) {
    const bytes = Buffer.concat([Buffer.from([2]), Buffer.from(v)]);
    await t.throwsAsync(gossip.validate(bytes, 'peer-a'), { instanceOf: InvalidConsensusMessage, message: /non-canonical/ });
  }
  const long = Buffer.concat([Buffer.from([2]), Buffer.from(JSON.stringify({ ...m.vote, pad: 'x'.repeat(600) }))]);
  await t.throwsAsync(gossip.validate(long, 'peer-a'), { instanceOf: InvalidConsensusMessage, message: /bytes/ });
});

test('later heights are ignored and held within bounds, earlier ones ignored; held messages are checked when their height comes', async (t) => {
  const { chain, gossip, received } = await setup(t);
  // Height 2's validator set is not known before block 1: even a forged vote is only ignored, not refused.
  t.is(await gossip.validate(wire(forged(vote(2, keys[1]))), 'peer-a'), 'ignore');
  t.is(await gossip.validate(wire(vote(2, keys[2])), 'peer-a'), 'ignore');
  t.is(gossip.heldCount, 2);
  t.is(await gossip.validate(wire(vote(1 + FUTURE_HEIGHTS, keys[2])), 'peer-a'), 'ignore');
  t.is(await gossip.validate(wire(vote(2 + FUTURE_HEIGHTS, keys[2])), 'peer-a'), 'ignore');
  t.is(gossip.heldCount, 3, 'beyond the window: not held');
  // Bounded per peer: one peer cannot fill the buffer for everybody.
  const cap = futurePerPeer(keys.length);
  for (let r = 0; r < cap + 20; r++) await gossip.validate(wire(forged(vote(3, keys[0], r))), 'flood');
  t.is(gossip.heldCount, 3 + cap);
  t.is(await gossip.validate(wire(vote(3, keys[3])), 'peer-b'), 'ignore');
  t.is(gossip.heldCount, 4 + cap, 'another peer still has room');
  t.is(received.length, 0);

  await commitNext(chain);
  // Height 2 is now being decided: the valid held vote reaches the engine, the forged one does not.
  await waitFor(() => received.length === 1, 10_000, 'the held vote released');
  t.like(received[0], { from: 'peer-a' });
  t.is(received[0].m.kind === 'vote' && received[0].m.vote.validator, keys[2].address);
  t.is(await gossip.validate(wire(vote(1, keys[0])), 'peer-a'), 'ignore', 'a decided height: ignored');
  t.is(gossip.heldCount, 2 + cap, 'height 2 left the buffer; height 3 stays');
});

test('a full node (no engine) checks and relays the height being decided, and holds nothing', async (t) => {
  const chain = await openChain(t);
  const gossip = new ConsensusGossip(chain, () => null);
  t.is(await gossip.validate(wire(vote(1, keys[0])), 'peer-a'), 'accept');
  await t.throwsAsync(gossip.validate(wire(forged(vote(1, keys[0]))), 'peer-a'), { instanceOf: InvalidConsensusMessage });
  t.is(await gossip.validate(wire(vote(2, keys[0])), 'peer-a'), 'ignore');
  t.is(gossip.heldCount, 0);
});

test('gossiped evidence: new is added, known is nothing new, a re-encoded variant is refused', async (t) => {
  const chain = await openChain(t);
  const pool = new EvidencePool(chain);
  const [a, b] = [vote(1, keys[0], 0, PREVOTE, 'aa'.repeat(32)), vote(1, keys[0], 0, PREVOTE, 'bb'.repeat(32))];
  if (a.kind !== 'vote' || b.kind !== 'vote') throw new Error('votes');
  const e = doubleSignEvidence(a.vote, b.vote);
  const bytes = encodeEvidence(e);
  const fields = RLP.decode(bytes) as Uint8Array[];
  fields[0] = Buffer.concat([Buffer.from([0]), fields[0]]); // height 1 as 0x0001
  await t.throwsAsync(async () => pool.addEncoded(RLP.encode(fields)), {
    instanceOf: InvalidEvidenceError,
    message: /canonical/,
  });
  t.truthy(pool.addEncoded(bytes));
  t.is(pool.addEncoded(bytes), null, 'known');
});

test("rounds far ahead of the engine's are ignored: proposals beyond 10, votes beyond 100", async (t) => {
  const chain = await openChain(t);
  const received: ConsensusMessage[] = [];
  const engine = { state: { round: 3 }, receive: async (m: ConsensusMessage) => void received.push(m) };
  const gossip = new ConsensusGossip(chain, () => engine);
  t.is(await gossip.validate(wire(vote(1, keys[0], 3 + VOTE_ROUNDS_AHEAD)), 'peer-a'), 'accept');
  t.is(await gossip.validate(wire(vote(1, keys[0], 4 + VOTE_ROUNDS_AHEAD)), 'peer-a'), 'ignore');
  // Checked for its round before its signature: a forged one far ahead is only ignored.
  const far = 4 + PROPOSAL_ROUNDS_AHEAD;
  const ref: ConsensusMessage = {
    kind: 'proposal_ref',
    ref: { height: 1, round: far, pol_round: -1, block_hash: 'cd'.repeat(32), signature: '11'.repeat(64) },
  };
  t.is(await gossip.validate(wire(ref), 'peer-a'), 'ignore');
  t.is(received.length, 1);
});
