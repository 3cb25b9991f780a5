import { DEFAULT_TRACE_OPTIONS, TRACE_TIMEOUT_MAX_MS, type TraceOptions, type TracerName } from '../execution/index.js';
import {
  type NodeContext,
  blockAtHeight,
  heightOfHash,
  heightOfTag,
  traceBlock,
  traceCall,
  traceNativeTransaction,
  traceTransaction,
} from '../services/index.js';
import { NotFoundError } from '../util/index.js';
import { stateHeightOf } from './eth.js';
import { parseCallArgs } from './evm.js';
import { parseBlockTag } from './params.js';
import { traceCallOverrides } from './override-params.js';
import { streamedStructLogs } from './streamed.js';
import { RPC, type RpcCaller, RpcError, type RpcTable } from './types.js';

/** A transaction id: 64 hex characters, with 0x (Ethereum's form) or without (the native txid as the node prints it). */
const HASH_RE = /^(0x)?[0-9a-fA-F]{64}$/;

/** Struct logs of a single HTTP request are streamed while produced (rpc/streamed.ts); the other tracers are small. */
const streams = (opts: TraceOptions, caller: RpcCaller): boolean => caller.canStream === true && opts.tracer === 'structLogger';
/** Go duration units (time.ParseDuration) in milliseconds. */
const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_RE = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/;
const TRACERS: Record<string, TracerName> = { callTracer: 'callTracer', prestateTracer: 'prestateTracer' };
/** tracerConfig fields each tracer understands (all booleans). */
const TRACER_CONFIG: Record<TracerName, readonly string[]> = {
  structLogger: [],
  callTracer: ['onlyTopCall', 'withLog'],
  prestateTracer: ['diffMode', 'disableCode', 'disableStorage', 'includeEmpty'],
};

/** Spec: a bad txid or a malformed tracer config is -32602 "invalid params"; the detail goes in `data`. */
const invalid = (detail: string): RpcError => new RpcError(RPC.invalidParams, 'invalid params', detail);

function txHashParam(v: unknown): string {
  if (typeof v !== 'string' || !HASH_RE.test(v)) throw invalid('txid must be 64 hex characters, with or without 0x');
  return v.slice(-64).toLowerCase();
}

/** A Go duration string ("500ms", "1m30s") in milliseconds. */
export function parseGoDuration(s: string): number {
  if (!DURATION_RE.test(s)) throw invalid(`timeout: not a duration: ${JSON.stringify(s)}`);
  let ms = 0;
  for (const [, n, unit] of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * DURATION_UNITS[unit];
  return ms;
}

function bool(o: Record<string, unknown>, key: string, where: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${where}${key} must be a boolean`);
  return v;
}

/** The trace options object of the debug_trace* methods (geth's TraceConfig). */
export function parseTraceOptions(raw: unknown): TraceOptions {
  const opts: TraceOptions = { ...DEFAULT_TRACE_OPTIONS };
  if (raw === undefined || raw === null) return opts;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('trace options must be an object');
  const o = raw as Record<string, unknown>;
  if (o.tracer !== undefined && o.tracer !== null && o.tracer !== '') {
    const name = typeof o.tracer === 'string' && Object.hasOwn(TRACERS, o.tracer) ? TRACERS[o.tracer] : undefined;
    if (!name) throw invalid(`tracer not found: ${String(o.tracer).slice(0, 64)} (callTracer, prestateTracer or none)`);
    opts.tracer = name;
  }
  if (o.timeout !== undefined && o.timeout !== null) {
    if (typeof o.timeout !== 'string') throw invalid('timeout must be a duration string such as "10s"');
    // The spec's maximum: a longer timeout is served as 30 s rather than refused.
    opts.timeoutMs = Math.min(parseGoDuration(o.timeout), TRACE_TIMEOUT_MAX_MS);
  }
  opts.disableStack = bool(o, 'disableStack', '') ?? false;
  opts.disableStorage = bool(o, 'disableStorage', '') ?? false;
  opts.enableReturnData = bool(o, 'enableReturnData', '') ?? false;
  const enableMemory = bool(o, 'enableMemory', '');
  const disableMemory = bool(o, 'disableMemory', '');
  opts.enableMemory = enableMemory ?? !(disableMemory ?? false);
  const cfg = o.tracerConfig;
  if (cfg !== undefined && cfg !== null) {
    if (typeof cfg !== 'object' || Array.isArray(cfg)) throw invalid('tracerConfig must be an object');
    const c = cfg as Record<string, unknown>;
    for (const key of Object.keys(c)) {
      if (!TRACER_CONFIG[opts.tracer].includes(key))
        throw invalid(`tracerConfig: unknown field ${key.slice(0, 64)} for ${opts.tracer}`);
    }
    opts.onlyTopCall = bool(c, 'onlyTopCall', 'tracerConfig.') ?? false;
    opts.withLog = bool(c, 'withLog', 'tracerConfig.') ?? false;
    opts.diffMode = bool(c, 'diffMode', 'tracerConfig.') ?? false;
    opts.disableCode = bool(c, 'disableCode', 'tracerConfig.') ?? false;
    opts.prestateDisableStorage = bool(c, 'disableStorage', 'tracerConfig.') ?? false;
    opts.includeEmpty = bool(c, 'includeEmpty', 'tracerConfig.') ?? false;
    // geth: diff mode reports creations and deletions, which needs empty accounts left out.
    if (opts.diffMode && opts.includeEmpty) throw invalid('tracerConfig: cannot use diffMode with includeEmpty');
  }
  return opts;
}

async function blockAt(ctx: NodeContext, height: number) {
  const block = await blockAtHeight(ctx, height);
  if (!block) throw new NotFoundError(`block #${height} not found`);
  return block;
}

/** debug_trace* (geth) and native_traceTransaction (spec, part A): handlers only translate shapes. */
export const traceMethods: RpcTable = {
  debug_traceTransaction: {
    params: ['any', 'any?'],
    handler: (ctx, [hash, options], caller) => {
      const txid = txHashParam(hash);
      const opts = parseTraceOptions(options);
      if (!streams(opts, caller)) return traceTransaction(ctx, txid, opts);
      return streamedStructLogs((sink) => traceTransaction(ctx, txid, { ...opts, sink }) as Promise<Record<string, unknown>>);
    },
  },
  debug_traceBlockByNumber: {
    params: ['blockTag', 'any?'],
    handler: async (ctx, [tag, options]) => {
      const opts = parseTraceOptions(options);
      return traceBlock(ctx, await blockAt(ctx, heightOfTag(ctx, parseBlockTag(tag, 0))), opts);
    },
  },
  debug_traceBlockByHash: {
    params: ['hash', 'any?'],
    handler: async (ctx, [hash, options]) => {
      const opts = parseTraceOptions(options);
      const height = await heightOfHash(ctx, hash as string);
      if (height === null) throw new NotFoundError(`block ${hash} not found`);
      return traceBlock(ctx, await blockAt(ctx, height), opts);
    },
  },
  debug_traceCall: {
    params: ['any', 'blockRef?', 'any?'],
    handler: async (ctx, [call, ref, options], caller) => {
      const args = parseCallArgs(call);
      const opts = parseTraceOptions(options);
      const overrides = traceCallOverrides(options);
      // As eth_call: on the state after the given block (from the state history), the head by default.
      const height = await stateHeightOf(ctx, ref, 1);
      if (!streams(opts, caller)) return traceCall(ctx, args, opts, height, overrides);
      return streamedStructLogs(
        (sink) => traceCall(ctx, args, { ...opts, sink }, height, overrides) as Promise<Record<string, unknown>>,
      );
    },
  },
  native_traceTransaction: {
    params: ['any'],
    handler: (ctx, [hash]) => traceNativeTransaction(ctx, txHashParam(hash)),
  },
};
