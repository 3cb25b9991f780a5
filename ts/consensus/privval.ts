import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

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
   * Every vote signed at `height` (round, step, hash). A validator that restarts mid-height sends them all
   * again (signatures are deterministic: the identical votes), as CometBFT replays its own votes from its
   * WAL: a vote that reached no one before the restart would otherwise be lost to the height for good,
   * and peers short of a quorum of any kind never time out to the next round.
   */
  votes?: { round: number; step: number; block_hash: string }[];
}

/**
 * The validator's last signed height/round/step, persisted (written and fsynced) before any proposal or
 * vote leaves the node, so a validator never signs two different things for one (height, round, step),
 * not even across kill -9 (CometBFT's privval state file is the model).
 */
export class SignGuard {
  private state: SignState;
  private readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'priv_validator_state.json');
    this.state = existsSync(this.path)
      ? (JSON.parse(readFileSync(this.path, 'utf8')) as SignState)
      : { height: 0, round: 0, step: 0, block_hash: '' };
  }

  /**
   * Allow signing (height, round, step, hash) and persist it; false when it would conflict with what was
   * signed before (an earlier position, or the same position with another block).
   */
  allow(height: number, round: number, step: number, blockHash: string): boolean {
    const s = this.state;
    const cmp = height !== s.height ? height - s.height : round !== s.round ? round - s.round : step - s.step;
    if (cmp < 0) return false;
    if (cmp === 0) return blockHash === s.block_hash;
    const lock = height === s.height ? s.lock : undefined;
    const votes = height === s.height ? [...(s.votes ?? [])] : [];
    if (step !== STEP_PROPOSE) votes.push({ round, step, block_hash: blockHash });
    this.state = { height, round, step, block_hash: blockHash, lock, votes };
    if (step === STEP_PRECOMMIT && blockHash !== '') this.state.lock = { round, block_hash: blockHash };
    this.persist();
    return true;
  }

  private persist(): void {
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(this.state));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }

  get last(): Readonly<SignState> {
    return this.state;
  }
}
