/**
 * Graceful drain and shutdown on SIGTERM/SIGINT (docs/operations.md, "Graceful drain"):
 *
 * 1. `/ready` answers 503 at once and every answer closes its connection, while the node keeps answering for
 *    `--drain-secs` so a load balancer's checks take it out of rotation without a failed request;
 * 2. the listener closes; requests in flight get up to `--shutdown-grace-secs` to finish; WebSocket clients
 *    are closed with 1001 ("going away");
 * 3. the node stops as before (journal closed, database closed: nothing accepted is lost).
 *
 * A second signal skips the waits of steps 1 and 2.
 */
import type { HttpServer } from '../http/index.js';

/** WebSocket close code sent when the drain ends (RFC 6455 §7.4.1: an endpoint going away). */
export const WS_GOING_AWAY = 1001;
/** How often the in-flight count is polled during the grace period. */
const POLL_MS = 20;

export interface DrainTarget {
  readonly http: HttpServer;
  /** Marks the node as draining (GET /ready turns 503). */
  beginDrain(): void;
  stop(): Promise<void>;
}

export interface DrainOptions {
  drainSecs: number;
  shutdownGraceSecs: number;
  /** Aborted by a second signal: the remaining waits are skipped. */
  skip: AbortSignal;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

/** Resolves after `ms`, or at once when `skip` is aborted. */
function pause(ms: number, skip: AbortSignal): Promise<void> {
  if (ms <= 0 || skip.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      skip.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    skip.addEventListener('abort', done, { once: true });
  });
}

/** Waits until no request is in flight, the deadline passes or `skip` is aborted; returns what is left. */
async function settle(http: HttpServer, deadline: number, skip: AbortSignal): Promise<number> {
  while (http.inFlight() > 0 && Date.now() < deadline && !skip.aborted) {
    await pause(Math.min(POLL_MS, deadline - Date.now()), skip);
  }
  return http.inFlight();
}

/** Drain, then stop (see the module comment). */
export async function drainAndStop(node: DrainTarget, o: DrainOptions): Promise<void> {
  const t0 = Date.now();
  node.beginDrain();
  node.http.drain();
  o.log.info({ drain_secs: o.drainSecs }, 'draining: /ready answers 503, still serving');
  await pause(o.drainSecs * 1000, o.skip);
  node.http.stopListening();
  node.http.closeWebSockets(WS_GOING_AWAY, 'going away');
  const left = await settle(node.http, Date.now() + o.shutdownGraceSecs * 1000, o.skip);
  if (left > 0) o.log.warn({ in_flight: left }, 'shutdown grace ended with requests in flight; they are dropped');
  o.log.info({ ms: Date.now() - t0, skipped: o.skip.aborted }, 'drain finished; stopping');
  await node.stop();
}

/**
 * SIGTERM and SIGINT start the drain; a second one skips its waits. SIGHUP calls `reload` (the API keys
 * file). Returns the promise of the first shutdown's end through `onStopped`.
 */
export function installSignalHandlers(
  node: DrainTarget,
  o: Omit<DrainOptions, 'skip'> & { reload?: () => void; onStopped: (err?: unknown) => void },
): void {
  const skip = new AbortController();
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      o.log.info({ signal }, 'second signal: skipping the drain');
      skip.abort();
      return;
    }
    started = true;
    o.log.info({ signal }, 'shutting down');
    drainAndStop(node, { ...o, skip: skip.signal }).then(
      () => o.onStopped(),
      (err) => o.onStopped(err ?? new Error('shutdown failed')),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (o.reload) process.on('SIGHUP', o.reload);
}
