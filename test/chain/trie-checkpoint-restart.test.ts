import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import type { Chain } from '../../ts/chain/chain.js';
import { trieCheckpointsSupported } from '../../ts/chain/trie-checkpoint.js';
import { toHex } from '../../ts/util/index.js';
import { CHECKPOINT_EVERY, checkpointPath, extendTo, openCheckpointChain } from '../helpers/checkpoint-chain.js';
import { tempDir, waitFor } from '../helpers/util.js';

const CHILD = fileURLToPath(new URL('../helpers/checkpoint-chain.js', import.meta.url));
const supported = trieCheckpointsSupported();

/** Checkpoints every 5 blocks in the first test: a restart at 9 brings the one of 5 forward by 4 blocks. */
const EVERY = 5;

/** Reopen the chain in `dir`: open() checks the head's root whatever the trie came from (it throws otherwise). */
async function reopen(dir: string, every = EVERY) {
  const { chain, db } = await openCheckpointChain(dir, every);
  return { chain, db, start: chain.trieStart, root: toHex(chain.state.root()) };
}

/** Wait until the periodic checkpoint of `height` is written. */
const checkpointed = (chain: Chain, height: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const on = (h: number, err: Error | null) => {
      if (h !== height) return;
      chain.off('checkpoint', on);
      if (err) reject(err);
      else resolve();
    };
    chain.on('checkpoint', on);
  });

test('restarts from a fresh checkpoint, a stale one, a corrupt one and one above a rolled-back head all reach the head root', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openCheckpointChain(tmp.dir, EVERY);
  const written = supported ? checkpointed(chain, 5) : Promise.resolve();
  await extendTo(chain, 5);
  await written;
  await extendTo(chain, 9);
  const head = chain.head;
  await db.close();

  // Stale: the checkpoint of block 5, brought forward by the change sets of 6..9.
  let r = await reopen(tmp.dir);
  t.is(r.root, head.state_root);
  t.is(r.chain.head.hash, head.hash);
  if (supported) t.like(r.start, { from: 'checkpoint', height: 5, replayedBlocks: 4 });
  else t.like(r.start, { from: 'rebuild' });

  // Fresh: written at a clean shutdown.
  t.is(await r.chain.checkpointNow(), supported);
  await r.db.close();
  r = await reopen(tmp.dir);
  t.is(r.root, head.state_root);
  if (supported) t.like(r.start, { from: 'checkpoint', height: 9, replayedBlocks: 0 });
  await r.db.close();

  if (supported) {
    // Corrupt: a flipped byte in the middle of the file fails its checksum; the trie is rebuilt from `S`.
    const file = readFileSync(checkpointPath(tmp.dir));
    file[file.length >> 1] ^= 0xff;
    writeFileSync(checkpointPath(tmp.dir), file);
    r = await reopen(tmp.dir);
    t.is(r.root, head.state_root);
    t.like(r.start, { from: 'rebuild' });
    t.log('corrupt checkpoint:', r.start?.from === 'rebuild' ? r.start.reason : '');
    // Truncated: the same.
    writeFileSync(checkpointPath(tmp.dir), file.subarray(0, 40));
    await r.db.close();
    r = await reopen(tmp.dir);
    t.is(r.root, head.state_root);
    t.like(r.start, { from: 'rebuild' });
    t.true(await r.chain.checkpointNow());
    await r.db.close();
  }

  // A rollback below the checkpoint (9), then new blocks past it: block 9 is another block now.
  ({ chain, db } = await openCheckpointChain(tmp.dir, EVERY));
  await chain.rollbackTo(4);
  await db.close();
  // No periodic checkpoint while the new branch is built (every 100 blocks).
  r = await reopen(tmp.dir, 100);
  t.is(r.chain.height, 4);
  t.like(r.start, { from: 'rebuild' });
  if (supported && r.start?.from === 'rebuild') t.regex(r.start.reason, /above the head/);
  // New blocks up to 9 (no checkpoint due before 10): the file still names the abandoned block 9.
  await extendTo(r.chain, 9, 1n);
  const newHead = r.chain.head;
  t.not(newHead.hash, head.hash);
  await r.db.close();
  r = await reopen(tmp.dir);
  t.is(r.root, newHead.state_root);
  t.like(r.start, { from: 'rebuild' });
  if (supported && r.start?.from === 'rebuild') t.regex(r.start.reason, /not this chain's/);
  await r.db.close();
});

/** Run the child chain (helpers/checkpoint-chain.ts) to `blocks` and kill it with SIGKILL as `mode` says. */
async function killChild(dir: string, blocks: number, mode: 'after-commit' | 'during-checkpoint'): Promise<void> {
  const proc = spawn(process.execPath, [CHILD, dir, String(blocks), mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<string | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  if (mode === 'after-commit') {
    await waitFor(() => out.includes('ready') || proc.exitCode !== null, 120_000, 'the child chain to commit its blocks');
    proc.kill('SIGKILL');
  }
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`child ended without being killed:\n${out}`);
}

test('kill -9 after a block is durable but before its checkpoint, and during a checkpoint write: the restart reaches the head root', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  // Block 5 is durable (odd: no checkpoint due); the last checkpoint is block 4's.
  await killChild(tmp.dir, 5, 'after-commit');
  let r = await reopen(tmp.dir, CHECKPOINT_EVERY);
  t.is(r.chain.height, 5);
  t.is(r.root, r.chain.head.state_root);
  if (supported) t.like(r.start, { from: 'checkpoint', height: 4, replayedBlocks: 1 });
  await r.db.close();
  // Killed while the checkpoint of block 8 may be half written: the previous file or a rebuild, never a wrong root.
  await killChild(tmp.dir, 8, 'during-checkpoint');
  r = await reopen(tmp.dir, CHECKPOINT_EVERY);
  t.is(r.chain.height, 8);
  t.is(r.root, r.chain.head.state_root);
  t.log('after a kill during a checkpoint write:', r.start);
  if (supported) t.true(r.start?.from === 'checkpoint' && r.start.height <= 8, JSON.stringify(r.start));
  await r.db.close();
});
