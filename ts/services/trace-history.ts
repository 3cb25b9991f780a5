import type { Chain } from '../chain/chain.js';
import { HistoricalStateUnavailableError } from '../execution/index.js';
import type { KeyStr, StateReader, StateUndo } from '../state/state-store.js';

/**
 * Blocks whose undo records tracing keeps (geth keeps 128 recent states in memory the same way). The
 * state before any of them is the head state with their undo records laid over it, newest first.
 */
export const TRACE_HISTORY_BLOCKS = 128;

/**
 * The state after block `height` while later blocks keep arriving: undo values of blocks above it
 * shadow the head state. Blocks committed while a trace reads it add their undo values for keys not
 * yet shadowed, so the view stays the same however far the head moves during the trace.
 */
export class HistoricalState implements StateReader {
  readonly past = new Map<KeyStr, Buffer | undefined>();

  constructor(private readonly head: StateReader) {}

  get(key: KeyStr): Buffer | undefined {
    return this.past.has(key) ? this.past.get(key) : this.head.get(key);
  }

  /** Lay an older block's undo values over the view (each overrides what newer blocks put). */
  layOlder(undo: StateUndo): void {
    for (const [k, v] of undo) this.past.set(k, v);
  }

  /** A block committed after the view was made: its previous values shadow keys not shadowed yet. */
  layNewer(undo: StateUndo): void {
    for (const [k, v] of undo) if (!this.past.has(k)) this.past.set(k, v);
  }
}

/**
 * The undo records of the last TRACE_HISTORY_BLOCKS committed blocks, fed by the chain's `block` event
 * from the moment the node wires it (blocks committed before, e.g. before a restart, have none).
 */
export class TraceHistory {
  private readonly undos = new Map<number, StateUndo>();
  private readonly live = new Set<HistoricalState>();

  constructor(private readonly chain: Chain) {
    chain.on('block', (block, _result, undo) => this.record(block.index, undo));
    chain.on('rollback', (height) => {
      for (const h of [...this.undos.keys()]) if (h > height) this.undos.delete(h);
    });
  }

  private record(height: number, undo: StateUndo): void {
    this.undos.set(height, undo);
    this.undos.delete(height - TRACE_HISTORY_BLOCKS);
    for (const view of this.live) view.layNewer(undo);
  }

  /**
   * Run `use` over the state after block `height` (the state before block height + 1). The view is
   * held open, and kept equal to that state, until `use` settles.
   */
  async withStateAfter<T>(height: number, use: (state: StateReader) => Promise<T>): Promise<T> {
    await this.chain.settled();
    const head = this.chain.height;
    const view = new HistoricalState(this.chain.state);
    for (let h = head; h > height; h--) {
      const undo = this.undos.get(h);
      if (!undo) {
        throw new HistoricalStateUnavailableError(
          height + 1,
          `tracing keeps the state of the last ${TRACE_HISTORY_BLOCKS} blocks committed since the node started`,
        );
      }
      view.layOlder(undo);
    }
    this.live.add(view);
    try {
      return await use(view);
    } finally {
      this.live.delete(view);
    }
  }
}

const histories = new WeakMap<Chain, TraceHistory>();

/** The chain's trace history; the node creates it when it opens the chain, so it sees every later block. */
export function traceHistoryOf(chain: Chain): TraceHistory {
  let h = histories.get(chain);
  if (!h) histories.set(chain, (h = new TraceHistory(chain)));
  return h;
}
