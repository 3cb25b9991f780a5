/**
 * Answers produced while they are sent: a debug_trace* struct-log trace can reach the 50 MB cap, and
 * building it in memory first holds all of it (and delays the first byte until the last step). Over HTTP a
 * single request's struct logs are written to the client as the trace produces them (chunked transfer
 * encoding, back-pressure from the socket). The answer starts as a normal one: until STREAM_AFTER_BYTES of
 * output exist, a failure is still a plain JSON-RPC error; past that point the status line is sent, and a
 * failure (trace timeout, output too large) closes the partial result and adds the error object, which
 * ethers and viem read as the call's error (docs/evm.md, Tracing).
 */
import type { StructLogSink } from '../execution/index.js';
import { NodeError, stringifyExact } from '../util/index.js';
import { rpcErrorOf } from './geth-errors.js';
import { RPC } from './types.js';

/** Output held back before the answer commits to streaming (a smaller trace is answered in one piece). */
export const STREAM_AFTER_BYTES = 1 << 20;

/**
 * A result whose JSON is `open`, then the producer's chunks, then `close(tail)`. Methods return one only
 * to a caller that can take a streamed answer (RpcCaller.canStream: a single HTTP request).
 */
export class StreamedResult {
  constructor(
    readonly open: string,
    readonly produce: (sink: StructLogSink) => Promise<Record<string, unknown>>,
    readonly close: (tail: Record<string, unknown>) => string,
  ) {}
}

/** Struct logs streamed as `{"structLogs":[...],"gas":…,"failed":…,"returnValue":…}` (geth's fields, logs first). */
export function streamedStructLogs(run: (sink: StructLogSink) => Promise<Record<string, unknown>>): StreamedResult {
  return new StreamedResult('{"structLogs":[', run, (tail) => `],${stringifyExact(tail).slice(1)}`);
}

/** The JSON-RPC error object of a failure (the dispatcher's mapping: NodeError words, else "internal error"). */
export function rpcErrorJson(err: unknown, onInternal?: (err: unknown) => void): string {
  if (err instanceof NodeError) {
    const { code, message } = rpcErrorOf(err);
    return stringifyExact(err.data === undefined ? { code, message } : { code, message, data: err.data });
  }
  onInternal?.(err);
  return stringifyExact({ code: RPC.internal, message: 'internal error' });
}

/** The streamed answer's writer: where the producer's chunks go, once the transport is ready for them. */
export interface StreamTarget {
  write(chunk: Buffer | string): boolean;
  end(chunk?: string): void;
  onDrain(cb: () => void): void;
  onClose(cb: () => void): void;
}

/** The client went away while its trace was streamed: the trace stops. */
export class StreamAbortedError extends Error {
  constructor() {
    super('client closed the connection');
  }
}

/** How a streamed answer goes out: in one piece (small, or failed early) or as a stream the caller attaches. */
export type StreamedAnswer = { whole: string } | { attach: (target: StreamTarget) => void };

/**
 * Run a StreamedResult for the response with this id. Resolves once it is known whether the answer fits in
 * one piece (finished or failed before STREAM_AFTER_BYTES) or must be streamed; production goes on meanwhile.
 */
export function runStreamed(idJson: string, r: StreamedResult, onInternal?: (err: unknown) => void): Promise<StreamedAnswer> {
  const prefix = `{"jsonrpc":"2.0","id":${idJson},"result":${r.open}`;
  const held: Buffer[] = [];
  let heldBytes = 0;
  let target: StreamTarget | null = null;
  let streaming = false;
  let draining = false;
  let aborted = false;
  let ending: string | null = null;
  let waiters: (() => void)[] = [];
  const wake = (): void => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const write = (t: StreamTarget, b: Buffer | string): void => {
    if (t.write(b) || draining) return;
    draining = true;
    t.onDrain(() => {
      draining = false;
      wake();
    });
  };
  return new Promise((resolve) => {
    const attach = (t: StreamTarget): void => {
      target = t;
      t.onClose(() => {
        aborted = true;
        wake();
      });
      write(t, prefix);
      for (const b of held.splice(0)) write(t, b);
      heldBytes = 0;
      if (ending !== null) t.end(ending);
      wake();
    };
    const sink: StructLogSink = {
      chunk(b) {
        if (aborted) throw new StreamAbortedError();
        if (target) return write(target, b);
        held.push(b);
        heldBytes += b.length;
        if (!streaming && heldBytes >= STREAM_AFTER_BYTES) {
          streaming = true;
          resolve({ attach });
        }
      },
      ready() {
        if (!streaming || aborted || (target && !draining)) return Promise.resolve();
        return new Promise<void>((res) => waiters.push(res));
      },
    };
    const finish = (text: string): void => {
      if (!streaming) resolve({ whole: prefix + Buffer.concat(held).toString('latin1') + text });
      else if (target) target.end(text);
      else ending = text;
    };
    r.produce(sink).then(
      (tail) => finish(`${r.close(tail)}}`),
      (err) => {
        if (!streaming) {
          return resolve({ whole: `{"jsonrpc":"2.0","id":${idJson},"error":${rpcErrorJson(err, onInternal)}}` });
        }
        if (err instanceof StreamAbortedError) return finish('');
        // Close the partial result (the text ends on a step boundary) and name the failure.
        finish(`]},"error":${rpcErrorJson(err, onInternal)}}`);
      },
    );
  });
}
