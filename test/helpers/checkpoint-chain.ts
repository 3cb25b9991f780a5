/**
 * A chain with trie checkpoints for restart tests, usable in-process and as a child process that is killed
 * (`node checkpoint-chain.js DIR BLOCKS MODE`): it commits blocks 1..BLOCKS and then, by MODE,
 * - `after-commit`: writes a checkpoint of block BLOCKS - 1, commits block BLOCKS (none due), prints `ready` and
 *   idles, so a kill lands after the last block's batch is durable and before any checkpoint of it;
 * - `during-checkpoint`: starts a checkpoint of the head and kills itself (SIGKILL) in the same tick.
 */
import { join } from 'node:path';
import { Chain, type ChainParams, PRESET_ACTIVATION } from '../../ts/chain/index.js';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { type KvStore, openRocksStore } from '../../ts/storage/index.js';
import { toHex } from '../../ts/util/index.js';

const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
export const checkpointValidator = keyPairFromMnemonic(DEV_MNEMONIC, 7);
const validator = checkpointValidator;
export const CHECKPOINT_TS = 1_700_000_000;
/** Checkpoints every this many blocks. */
export const CHECKPOINT_EVERY = 2;

/** A dev chain with one validator; alice holds 1000 coins unless `alloc` says otherwise. */
export function checkpointParams(alloc = new Map([[alice.address, 1000n * BASE_PER_COIN]])): ChainParams {
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: CHECKPOINT_TS,
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: 'v' }],
    alloc,
    evmHardfork: 'prague',
    epochLength: 3600,
  };
}

export const checkpointPath = (dir: string): string => join(dir, 'state-trie.ckpt');

export async function openCheckpointChain(dir: string, everyBlocks = CHECKPOINT_EVERY): Promise<{ chain: Chain; db: KvStore }> {
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(checkpointParams(), db, 4, { trieCheckpoint: { path: checkpointPath(dir), everyBlocks } });
  chain.now = () => CHECKPOINT_TS + 100_000;
  await chain.open();
  return { chain, db };
}

/** Blocks of three transfers each to new accounts, from the head up to height `to` (`salt` changes the amounts: another branch). */
export async function extendTo(chain: Chain, to: number, salt = 0n): Promise<void> {
  while (chain.height < to) {
    const h = chain.height + 1;
    const txs = [0, 1, 2].map((i) =>
      signTransaction(
        {
          from: alice.address,
          to: `0x${(0xc0ffee00 + h * 8 + i).toString(16).padStart(40, '0')}`,
          amount: BASE_PER_COIN + salt,
          fee: 10_000n,
          nonce: BigInt((h - 1) * 3 + i),
          chain_id: 7120,
          timestamp: CHECKPOINT_TS,
        },
        alice,
      ),
    );
    await chain.commit(await chain.propose(txs, validator, CHECKPOINT_TS + h));
  }
}

async function child(dir: string, blocks: number, mode: string): Promise<void> {
  const { chain } = await openCheckpointChain(dir);
  if (mode === 'during-checkpoint') {
    await extendTo(chain, blocks);
    void chain.checkpointNow();
    process.kill(process.pid, 'SIGKILL');
    return;
  }
  // A periodic checkpoint is skipped while the previous one is still being written: write this one for sure.
  await extendTo(chain, blocks - 1);
  await chain.checkpointNow();
  await extendTo(chain, blocks);
  process.stdout.write('ready\n');
  setInterval(() => undefined, 60_000);
}

if (process.argv[1]?.endsWith('checkpoint-chain.js')) {
  const [dir, blocks, mode] = process.argv.slice(2);
  child(dir, Number(blocks), mode).catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
