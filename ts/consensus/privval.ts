import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { type Block, decodeBlock, encodeBlock } from '../chain/index.js';

/** Steps in signing order within a round. */
export const STEP_PROPOSE = 1;
export const STEP_PREVOTE = 2;
export const STEP_PRECOMMIT = 3;

interface SignState {
  height: number;
  round: number;
  step: number;
  block_hash: string;
  /** The block this validator is locked on (precommitted) at `height`, kept across restarts. */
  lock?: { round: number; block_hash: string };
  /**
   * The newest block of `height` seen with a prevote quorum (Tendermint's validValue and validRound), the one
   * this validator proposes when it is the proposer. Set with the lock, and alone when a later round's
   * quorum arrives after this validator precommitted.
   */
  valid?: { round: number; block_hash: string };
  /**
   * Every vote signed at `height` (round, step, hash). A validator that restarts mid-height sends them all
   * again (signatures are deterministic: the identical votes), as CometBFT replays its own votes from its
   * WAL: a vote that reached no one before the restart would otherwise be lost to the height for good,
   * and peers short of a quorum of any kind never time out to the next round.
   */
  votes?: { round: number; step: number; block_hash: string }[];
}

/** Write a file durably: a temporary file fsynced, renamed over the target, and the directory fsynced. */
function writeDurably(dir: string, name: string, data: Uint8Array | string): void {
  const path = join(dir, name);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const d = openSync(dir, 'r');
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
}

/**
 * The validator's last signed height/round/step, persisted (written and fsynced) before any proposal or
 * vote leaves the node, so a validator never signs two different things for one (height, round, step),
 * not even across kill -9 (CometBFT's privval state file is the model). With it, the blocks its lock and
 * valid block refer to (`priv_validator_blocks/<hash>.block`, each written and fsynced before the state
 * that names it): a validator restarted mid-height gets back the block it is locked on, proposes it
 * again and serves it to peers (CometBFT keeps the proposal's block parts in its consensus WAL).
 */
export class SignGuard {
  private state: SignState;
  private readonly dir: string;
  private readonly blocksDir: string;

  constructor(dataDir: string) {
    this.dir = dataDir;
    this.blocksDir = join(dataDir, 'priv_validator_blocks');
    const path = join(dataDir, 'priv_validator_state.json');
    this.state = existsSync(path)
      ? (JSON.parse(readFileSync(path, 'utf8')) as SignState)
      : { height: 0, round: 0, step: 0, block_hash: '' };
  }

  /**
   * Allow signing (height, round, step, hash) and persist it; false when it would conflict with what was
   * signed before (an earlier position, or the same position with another block). A precommit for a block
   * locks this validator on it: the block (required then) is kept with the lock, as the valid block too.
   */
  allow(height: number, round: number, step: number, blockHash: string, block?: Block): boolean {
    const s = this.state;
    const cmp = height !== s.height ? height - s.height : round !== s.round ? round - s.round : step - s.step;
    if (cmp < 0) return false;
    if (cmp === 0) return blockHash === s.block_hash;
    const locks = step === STEP_PRECOMMIT && blockHash !== '';
    if (locks) {
      if (block?.hash !== blockHash) throw new Error(`precommit for ${blockHash} signed without its block`);
      this.keepBlock(block);
    }
    const same = height === s.height;
    const votes = same ? [...(s.votes ?? [])] : [];
    if (step !== STEP_PROPOSE) votes.push({ round, step, block_hash: blockHash });
    this.state = { height, round, step, block_hash: blockHash, votes };
    const lock = locks ? { round, block_hash: blockHash } : same ? s.lock : undefined;
    const valid = locks ? lock : same ? s.valid : undefined;
    if (lock) this.state.lock = lock;
    if (valid) this.state.valid = valid;
    this.persist();
    return true;
  }

  /** Record a block of `height` with a prevote quorum in `round` as the valid block (kept on disk first). */
  keepValid(height: number, round: number, block: Block): void {
    const s = this.state;
    if (height < s.height || (height === s.height && s.valid && s.valid.round >= round)) return;
    this.keepBlock(block);
    // Nothing signed at this height yet: its record starts here (position before any step of round 0).
    const base: SignState = height === s.height ? s : { height, round: 0, step: 0, block_hash: '', votes: [] };
    this.state = { ...base, valid: { round, block_hash: block.hash } };
    this.persist();
  }

  /** A block the lock or the valid block names, read back from disk (null: not kept, or not that block). */
  keptBlock(hash: string): Block | null {
    if (!/^[0-9a-f]{64}$/.test(hash)) return null;
    try {
      const block = decodeBlock(readFileSync(join(this.blocksDir, `${hash}.block`)));
      return block.hash === hash ? block : null;
    } catch {
      return null;
    }
  }

  private keepBlock(block: Block): void {
    const name = `${block.hash}.block`;
    if (existsSync(join(this.blocksDir, name))) return;
    mkdirSync(this.blocksDir, { recursive: true, mode: 0o700 });
    writeDurably(this.blocksDir, name, encodeBlock(block));
  }

  private persist(): void {
    writeDurably(this.dir, 'priv_validator_state.json', JSON.stringify(this.state));
    // Blocks the state no longer names (an earlier height's) are dropped once the new state is on disk.
    const named = new Set([this.state.lock?.block_hash, this.state.valid?.block_hash].map((h) => `${h}.block`));
    if (!existsSync(this.blocksDir)) return;
    for (const f of readdirSync(this.blocksDir)) if (!named.has(f)) unlinkSync(join(this.blocksDir, f));
  }

  get last(): Readonly<SignState> {
    return this.state;
  }
}
