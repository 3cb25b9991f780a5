/**
 * The block rules of DPoS+BFT blocks on real chains (RocksDB in temp dirs): the commit certificate
 * (3/4 of the voting power), the parent's certificate in `last_commit`, and double-sign evidence
 * (verified, recorded in state, never included twice). One chain proposes, a second one imports.
 */
import test from 'ava';
import { type Block, blockHash, decodeBlock, encodeBlock, evidenceHash, headerOf, lastCommitHash } from '../../ts/chain/block.js';
import type { Chain } from '../../ts/chain/chain.js';
import { checkedOf } from '../../ts/chain/validate-block.js';
import {
  decodeEvidence,
  doubleSignEvidence,
  encodeEvidence,
  evidenceId,
  evidenceIncludedAt,
  evidenceProblem,
} from '../../ts/chain/evidence.js';
import {
  PRECOMMIT,
  PREVOTE,
  type Vote,
  encodeJustification,
  isQuorum,
  justificationProblem,
  justificationSigners,
  voteDigest,
} from '../../ts/chain/justification.js';
import { type ActiveValidator, proposerAt, validatorSetAt } from '../../ts/chain/schedule.js';
import { type BlockRule, InvalidBlockError } from '../../ts/chain/validate-block.js';
import { type KeyPair, keyPairFromMnemonic, signDigest, MIN_SELF_STAKE_BASE, getSigningInfo } from '../../ts/ledger/index.js';
import { fromHex, toHex } from '../../ts/util/index.js';
import { NOW, fixtureParams, openFixtureChain, transfer, alice } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';
import { validateChain } from '../../ts/chain/validate.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const keys = [4, 5, 6, 7].map((i) => keyPairFromMnemonic(MNEMONIC, i));
const params = fixtureParams(keys); // dev activation: DPoS+BFT from height 1 with four validators
const keyOf = (address: string): KeyPair => keys.find((k) => k.address === address) as KeyPair;

function sign(type: Vote['type'], height: number, round: number, hash: string, key: KeyPair): Vote {
  const body = { type, height, round, block_hash: hash };
  return { ...body, validator: key.address, signature: toHex(signDigest(voteDigest(params.chainId, body), key.privateKey)) };
}

function certificate(b: Block, signers: KeyPair[], round = 0): Uint8Array {
  const precommits = signers
    .map((k) => sign(PRECOMMIT, b.index, round, b.hash, k))
    .sort((x, y) => (x.validator < y.validator ? -1 : 1))
    .map((v) => ({ validator: v.validator, signature: v.signature }));
  return encodeJustification({ round, precommits });
}

/** The next block of `chain` as its round-0 proposer makes it (a proposal: no certificate yet). */
async function proposal(chain: Chain, opts: { evidence?: Uint8Array[]; lastCommit?: Uint8Array } = {}): Promise<Block> {
  const h = chain.height + 1;
  const proposer = keyOf(proposerAt(params, chain.state, h, 0)?.address as string);
  const head = chain.head;
  const lastCommit = opts.lastCommit ?? (head.consensus === 'DPoS+BFT' ? head.justification : new Uint8Array(0));
  const exec = await chain.execute([], proposer.address, NOW, undefined, {
    last_commit: lastCommit,
    evidence: opts.evidence ?? [],
  });
  const sealed = chain.seal(exec, proposer, 0, { proposal: true });
  chain.abandon(sealed);
  return sealed.block;
}

/** Re-hash and re-sign a changed proposal with its proposer's key. */
function reseal(b: Block): Block {
  const out = { ...b };
  out.hash = blockHash(headerOf(out));
  out.signature = toHex(signDigest(fromHex(out.hash), keyOf(b.validator).privateKey));
  return out;
}

async function rejects(t: import('ava').ExecutionContext, chain: Chain, b: Block, rule: BlockRule): Promise<void> {
  const err = await t.throwsAsync(chain.importBlock(b), { instanceOf: InvalidBlockError });
  t.is(err?.rule, rule, err?.message);
}

async function twoChains(t: import('ava').ExecutionContext, p = params): Promise<{ a: Chain; b: Chain }> {
  const d1 = tempDir();
  const d2 = tempDir();
  const x = await openFixtureChain(d1.dir, p);
  const y = await openFixtureChain(d2.dir, p);
  t.teardown(async () => {
    await x.db.close();
    await y.db.close();
    d1.cleanup();
    d2.cleanup();
  });
  return { a: x.chain, b: y.chain };
}

/** Propose on a, finalize with three precommits, import on both chains. */
async function finalizeNext(a: Chain, b: Chain, opts: { evidence?: Uint8Array[] } = {}): Promise<Block> {
  const p = await proposal(a, opts);
  const final = { ...p, justification: certificate(p, keys.slice(0, 3)) };
  await a.importBlock(final);
  await b.importBlock(decodeBlock(encodeBlock(final)));
  return final;
}

test('a BFT block needs precommits of 3/4 of the voting power; the encoding round-trips its consensus data', async (t) => {
  const { a, b } = await twoChains(t);
  t.is(a.consensusAt(1), 'DPoS+BFT');
  const p = await proposal(a);
  t.is(p.version, 2);
  t.is(p.last_commit.length, 0, 'the parent (genesis) is not a BFT block');
  await rejects(t, b, p, 'justification'); // no certificate at all
  await rejects(t, b, { ...p, justification: certificate(p, keys.slice(0, 2)) }, 'justification');
  const twice = certificate(p, [keys[0], keys[0], keys[1]]);
  await rejects(t, b, { ...p, justification: twice }, 'justification');
  const otherRound = { ...p, justification: encodeJustification({ round: 1, precommits: [] }) };
  await rejects(t, b, otherRound, 'justification');
  const final = { ...p, justification: certificate(p, keys.slice(1, 4)) };
  const wire = decodeBlock(encodeBlock(final));
  t.is(wire.hash, final.hash);
  t.is(wire.last_commit_hash, final.last_commit_hash);
  t.is(wire.evidence_hash, final.evidence_hash);
  await b.importBlock(wire);
  t.is(b.height, 1);
});

test("a BFT block carries its parent's commit certificate in last_commit, fixed by its hash", async (t) => {
  const { a, b } = await twoChains(t);
  const first = await finalizeNext(a, b);
  const p = await proposal(a);
  t.deepEqual(p.last_commit, first.justification);
  const cert = (x: Block) => ({ ...x, justification: certificate(x, keys.slice(0, 3)) });
  // Missing, too few signers, or a certificate of another block: refused.
  const withLastCommit = (lastCommit: Uint8Array) =>
    cert(reseal({ ...p, last_commit: lastCommit, last_commit_hash: lastCommitHash(lastCommit) }));
  await rejects(t, b, withLastCommit(new Uint8Array(0)), 'last_commit');
  await rejects(t, b, withLastCommit(certificate(first, keys.slice(0, 2))), 'last_commit');
  const other = { ...first, hash: 'ab'.repeat(32) };
  await rejects(t, b, withLastCommit(certificate(other, keys.slice(0, 3))), 'last_commit');
  // A body changed in transit (another valid certificate, hash untouched): the hash no longer fixes it.
  const swapped = { ...cert(p), last_commit: certificate(first, keys.slice(1, 4)) };
  t.not(lastCommitHash(swapped.last_commit), swapped.last_commit_hash);
  await rejects(t, b, swapped, 'last_commit');
  // Another certificate of the same parent (a different quorum) is valid when the proposer signs it.
  await b.importBlock(cert(await proposal(a, { lastCommit: certificate(first, keys.slice(1, 4)) })));
  t.is(b.height, 2);
});

test('double-sign evidence: verified, included once, recorded in state; forged or stale evidence refused', async (t) => {
  const { a, b } = await twoChains(t);
  const first = await finalizeNext(a, b);
  const cheat = keys[2];
  const x = sign(PREVOTE, 1, 0, first.hash, cheat);
  const y = sign(PREVOTE, 1, 0, 'cd'.repeat(32), cheat);
  const e = doubleSignEvidence(y, x);
  t.deepEqual(decodeEvidence(encodeEvidence(e)), e);
  t.is(evidenceId(doubleSignEvidence(x, y)), evidenceId(e), 'one conflict, one encoding');
  const set = (h: number) => validatorSetAt(params, a.state, h);
  t.is(evidenceProblem(params.chainId, e, 2, set, a.state), null);

  const withEvidence = await finalizeNext(a, b, { evidence: [encodeEvidence(e)] });
  t.is(withEvidence.evidence.length, 1);
  t.is(evidenceIncludedAt(b.state, evidenceId(e)), withEvidence.index, 'the importer recorded it in state');
  t.is(a.head.state_root, b.head.state_root);
  t.regex(evidenceProblem(params.chainId, e, 3, set, b.state) ?? '', /already included at height 2/);

  const cert = (p: Block) => ({ ...p, justification: certificate(p, keys.slice(0, 3)) });
  // The same evidence again, a non-conflict, a bad signature, a non-validator, a future height: all refused.
  const outsider = keyPairFromMnemonic(MNEMONIC, 12);
  const cases: [string, Vote, Vote][] = [
    ['same block twice', x, { ...x }],
    ['bad signature', x, { ...y, signature: x.signature }],
    ['not a validator', sign(PREVOTE, 1, 0, first.hash, outsider), sign(PREVOTE, 1, 0, 'cd'.repeat(32), outsider)],
    ['different rounds', x, sign(PREVOTE, 1, 1, 'cd'.repeat(32), cheat)],
    ['future height', sign(PREVOTE, 9, 0, first.hash, cheat), sign(PREVOTE, 9, 0, 'cd'.repeat(32), cheat)],
  ];
  for (const [name, v1, v2] of cases) {
    const bad = cert(await proposalWithRawEvidence(a, [encodeEvidence(doubleSignEvidence(v1, v2))]));
    const err = await t.throwsAsync(b.importBlock(bad), { instanceOf: InvalidBlockError }, name);
    t.is(err?.rule, 'evidence', `${name}: ${err?.message}`);
  }
  await rejects(t, b, cert(await proposalWithRawEvidence(a, [encodeEvidence(e)])), 'evidence');
  await rejects(t, b, cert(await proposalWithRawEvidence(a, [new Uint8Array([1, 2, 3])])), 'evidence');
  t.is(b.height, 2, 'nothing of a refused block persists');
});

/**
 * A proposal whose evidence list the proposer's own rules would refuse: built with none, then the
 * evidence (and its hash) swapped in and the block re-signed, as a faulty proposer would.
 */
async function proposalWithRawEvidence(chain: Chain, evidence: Uint8Array[]): Promise<Block> {
  const p = await proposal(chain);
  return reseal({ ...p, evidence, evidence_hash: evidenceHash(evidence) });
}

test('a checked proposal commits its checked outcome; against another parent it is refused', async (t) => {
  const { a, b } = await twoChains(t);
  await finalizeNext(a, b);
  const tx = transfer(alice, 0n);
  const h = a.height + 1;
  const proposer = keyOf(proposerAt(params, a.state, h, 0)?.address as string);
  const exec = await a.execute([tx], proposer.address, NOW, undefined, { last_commit: a.head.justification, evidence: [] });
  const sealed = a.seal(exec, proposer, 0, { proposal: true });
  a.abandon(sealed);
  const p = sealed.block;
  t.is(p.tx_count, 1);
  const checked = await b.checkProposal(p);
  const final = { ...p, justification: certificate(p, keys.slice(0, 3)) };
  await b.commitChecked(final, checked);
  await a.commitChecked(final, { parentHash: p.previous_hash, ...checkedOf(sealed) });
  t.is(b.head.hash, final.hash);
  t.is(a.head.state_root, b.head.state_root);
  // The same outcome offered for the next height (another parent) is refused and changes nothing.
  const next = await proposal(a);
  const err = await t.throwsAsync(b.commitChecked({ ...next, justification: certificate(next, keys.slice(0, 3)) }, checked), {
    instanceOf: InvalidBlockError,
  });
  t.is(err?.rule, 'parent_hash');
  t.is(b.height, 2);
});

test('quorum is 3/4 of the voting power, not of the head count', (t) => {
  const weighted: ActiveValidator[] = keys.map((k, i) => ({
    address: k.address,
    public_key: toHex(k.publicKey),
    name: `v${i}`,
    power: i === 3 ? 5n : 1n,
  }));
  t.true(isQuorum(3n, 4n));
  t.false(isQuorum(2n, 4n));
  t.false(isQuorum(0n, 0n));
  const block = { index: 1, hash: 'ef'.repeat(32) } as Block;
  const small = weighted.slice(0, 3).map((v) => keyOf(v.address));
  t.regex(justificationProblem(params.chainId, 1, block.hash, certificate(block, small), weighted) ?? '', /3 of 8 voting power/);
  const big = [keyOf(weighted[3].address), keyOf(weighted[0].address)];
  t.is(justificationProblem(params.chainId, 1, block.hash, certificate(block, big), weighted), null, '6 of 8 = 3/4');
});

test("signing records (uptime, downtime) follow each block's last_commit, not a node's own certificate: made, imported and replayed alike", async (t) => {
  // Staked validators: the staking module records who signed at the end of every block.
  const staked = { ...params, validators: params.validators.map((v) => ({ ...v, stake: MIN_SELF_STAKE_BASE })) };
  const { a, b } = await twoChains(t, staked);
  const absent = keys[3];
  const present = keys.filter((k) => k !== absent);
  for (let i = 0; i < 6; i++) {
    const h = a.height + 1;
    const proposer = keyOf(proposerAt(staked, a.state, h, 0)?.address as string);
    // Both nodes hold a certificate of all four for the parent; the proposer's last_commit names three.
    const lastCommit = a.head.consensus === 'DPoS+BFT' ? certificate(a.head, present) : new Uint8Array(0);
    const exec = await a.execute([], proposer.address, NOW, undefined, { last_commit: lastCommit, evidence: [] });
    const sealed = a.seal(exec, proposer, 0, { proposal: true });
    a.abandon(sealed);
    const final = { ...sealed.block, justification: certificate(sealed.block, keys) };
    await a.commitChecked(final, { parentHash: final.previous_hash, ...checkedOf(sealed) });
    await b.importBlock(decodeBlock(encodeBlock(final)));
  }
  t.is(a.height, 6);
  t.is(a.head.state_root, b.head.state_root);
  // Block 1's parent (genesis) has no certificate: only its proposer is recorded. Blocks 2-6 name three.
  for (const chain of [a, b]) {
    t.is(getSigningInfo(chain.state, absent.address).missed_total, 5, 'the validator absent from every last_commit missed 5');
    t.is(getSigningInfo(chain.state, absent.address).signed_total, 0);
    for (const k of present) t.true(getSigningInfo(chain.state, k.address).signed_total >= 5, k.address);
    const replay = await validateChain(chain);
    t.true(replay.valid, replay.error ?? '');
  }
});

test('a validator that leaves the set at block p (tombstoned) still counts in the certificate of p: p + 1 is made, imported and replayed', async (t) => {
  const five = [4, 5, 6, 7, 8].map((i) => keyPairFromMnemonic(MNEMONIC, i));
  const base = fixtureParams(five);
  const staked = { ...base, validators: base.validators.map((v) => ({ ...v, stake: MIN_SELF_STAKE_BASE })) };
  const { a, b } = await twoChains(t, staked);
  const cheat = five[2];
  let voters = five;
  const next = async (evidence: Uint8Array[] = []): Promise<Block> => {
    const h = a.height + 1;
    const proposer = five.find((k) => k.address === proposerAt(staked, a.state, h, 0)?.address) as KeyPair;
    // The parent's certificate, signed by every validator of the set in force at the parent.
    const lastCommit = a.head.consensus === 'DPoS+BFT' ? certificate(a.head, voters) : new Uint8Array(0);
    if (h >= 3) voters = five.filter((k) => k !== cheat); // out of the set from block 3 on
    const exec = await a.execute([], proposer.address, NOW, undefined, { last_commit: lastCommit, evidence });
    const sealed = a.seal(exec, proposer, 0, { proposal: true });
    a.abandon(sealed);
    const final = { ...sealed.block, justification: certificate(sealed.block, voters) };
    await a.commitChecked(final, { parentHash: final.previous_hash, ...checkedOf(sealed) });
    await b.importBlock(decodeBlock(encodeBlock(final)));
    return final;
  };
  const first = await next();
  const e = doubleSignEvidence(sign(PREVOTE, 1, 0, first.hash, cheat), sign(PREVOTE, 1, 0, 'cd'.repeat(32), cheat));
  await next([encodeEvidence(e)]); // block 2 tombstones the cheat: the set changes from block 3 on
  t.is(validatorSetAt(staked, a.state, 3).length, 4);
  t.is(validatorSetAt(staked, a.state, 2).length, 5, 'block 2 was certified by the set in force at 2');
  const third = await next(); // its last_commit holds the cheat's precommit of block 2
  t.true(justificationSigners(third.last_commit).includes(cheat.address));
  await next();
  t.is(b.height, 4);
  t.is(a.head.state_root, b.head.state_root);
  t.is(a.consensusAt(5), 'DPoS+BFT');
  for (const chain of [a, b]) {
    const replay = await validateChain(chain);
    t.true(replay.valid, replay.error ?? '');
  }
});
