/**
 * Proving a peer's claimed head (ts/sync/proven-heads.ts) against a real chain (RocksDB in a temp dir)
 * whose validator set is four keys: a block a thousand heights ahead proves itself with a certificate
 * signed by more than 1/3 of that set's power, or (without a certificate) by a validator's signature; a
 * block of another height, with a broken hash or undecodable bytes is a false claim.
 */
import test from 'ava';
import { type Block, decodeBlock, encodeBlock } from '../../ts/chain/index.js';
import { keyPairFromMnemonic, randomKeyPair } from '../../ts/ledger/index.js';
import { ProvenHeads, proveHead } from '../../ts/sync/proven-heads.js';
import { fixtureParams, openFixtureChain } from '../helpers/chain-fixture.js';
import { forgeChild } from '../helpers/rogue-peer.js';
import { tempDir } from '../helpers/util.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const validators = [4, 5, 6, 7].map((i) => keyPairFromMnemonic(MNEMONIC, i));
const CLAIM = 1_000;

test('a claimed head proves itself by a certificate of more than 1/3 of the known power, or a known proposer', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir, fixtureParams(validators));
  t.teardown(() => db.close());
  const genesis = chain.head;
  const parent: Block = { ...genesis, index: CLAIM - 1 };
  const certifiedBy = (voters: typeof validators) => forgeChild(7120, parent, validators[0], voters, {});

  t.is(proveHead(chain, certifiedBy(validators.slice(0, 2)), CLAIM).kind, 'proven', '2 of 4 validators: more than 1/3');
  t.is(proveHead(chain, certifiedBy(validators), CLAIM).kind, 'proven');
  const one = proveHead(chain, certifiedBy(validators.slice(0, 1)), CLAIM);
  t.is(one.kind, 'unproven', '1 of 4 is not more than 1/3');
  const strangers = [randomKeyPair(), randomKeyPair(), randomKeyPair()];
  t.is(proveHead(chain, forgeChild(7120, parent, strangers[0], strangers, {}), CLAIM).kind, 'unproven', 'unknown signers');

  // Without a certificate (PoA, DPoS before BFT): the proposer's signature by a validator of the set.
  const bare = (proposer: (typeof validators)[0]) =>
    encodeBlock({ ...decodeBlock(forgeChild(7120, parent, proposer, [], {})), justification: new Uint8Array(0) });
  t.is(proveHead(chain, bare(validators[2]), CLAIM).kind, 'proven');
  t.is(proveHead(chain, bare(strangers[0]), CLAIM).kind, 'unproven');
  const forgedProposer = { ...decodeBlock(bare(strangers[0])), validator: validators[1].address };
  t.is(proveHead(chain, encodeBlock(forgedProposer), CLAIM).kind, 'false', "a validator's name on a stranger's signature");

  // False claims: another height, a certificate that does not sign this block (forged), bytes that are no block.
  t.is(proveHead(chain, certifiedBy(validators), CLAIM + 1).kind, 'false');
  const tampered = encodeBlock({ ...decodeBlock(certifiedBy(validators)), timestamp: genesis.timestamp + 99 });
  t.is(proveHead(chain, tampered, CLAIM).kind, 'false');
  t.is(proveHead(chain, Uint8Array.of(1, 2, 3), CLAIM).kind, 'false');
});

test('proven heads keep the highest height per peer, rank peers and forget a dropped one', (t) => {
  const heads = new ProvenHeads();
  t.is(heads.best(), -1);
  heads.note('a', 10);
  heads.note('a', 7);
  heads.note('b', 12);
  t.is(heads.get('a'), 10, 'a lower height does not replace a proven one');
  t.deepEqual(heads.ranked(), [
    ['b', 12],
    ['a', 10],
  ]);
  heads.drop('b');
  t.is(heads.best(), 10);
  t.is(heads.get('b'), -1);
});
