/**
 * The node's stops: each builder of ts/node/build returns what it built and how to stop it; the node pushes
 * the stop here as the builder returns, and shutdown (or a start that fails half-way) runs them last first.
 */

import type { Chain } from '../../chain/index.js';
import type { Mempool, TxAdmission } from '../../mempool/index.js';

/** The concrete chain, pool and admission behind NodeContext's read interfaces: what the wiring (networking, production, metrics, shutdown) drives. */
export interface NodeCore {
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
}

/** Releases what one builder built (ports, workers, files, listeners). */
export type Stop = () => void | Promise<void>;

/** What a builder returns: what it built, and its stop when it holds anything. */
export type Built<T> = T & { stop?: Stop };

export class StopStack {
  private readonly stops: { name: string; stop: Stop }[] = [];

  /** Keeps `built`'s stop (under `name`, for the log of a stop that fails) and hands `built` back. */
  take<T extends object>(name: string, built: Built<T>): Built<T> {
    if (built.stop) this.stops.push({ name, stop: built.stop });
    return built;
  }

  /**
   * Runs every stop, the last taken first, each once. A stop that fails is reported and the others still
   * run (nothing stays open because an earlier part failed); the first failure is thrown at the end.
   */
  async unwind(onError: (err: unknown, name: string) => void): Promise<void> {
    let first: { err: unknown } | undefined;
    for (let s = this.stops.pop(); s; s = this.stops.pop()) {
      try {
        await s.stop();
      } catch (err) {
        onError(err, s.name);
        first ??= { err };
      }
    }
    if (first) throw first.err;
  }
}
