/**
 * The native.v1.Native methods, one handler each, shared by both transports (HTTP/2 and gRPC-Web). Handlers
 * check the request's shape, call ts/services and answer a message (or its encoding); every failure is a
 * thrown error that errors.ts maps to a gRPC status.
 */
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import {
  type BlockSelector,
  type NodeContext,
  accountAt,
  findBlock,
  findRecentBlock,
  submitRawTransaction,
  submitTransaction,
} from '../services/index.js';
import { NotFoundError, toHex } from '../util/index.js';
import { encodedBlockCache } from './block-cache.js';
import { invalidArgument } from './errors.js';
import {
  type Address,
  type BroadcastTxRequest,
  type GetBalanceRequest,
  type GetBlockRequest,
  type Hash,
  Native,
  type StreamEventsRequest,
  type Transaction,
} from './gen/native/v1/native_pb.js';
import { encodeAccountAnswer, encodeBlock, hashMessage } from './shapes.js';
import { EventStream } from './stream-events.js';

/** What a handler knows of its call. */
export interface CallInfo {
  /** Aborted when the client cancels, the deadline passes or the server stops. */
  signal: AbortSignal;
}

/** A unary handler's answer: the response message, or its encoding when the handler has it cached. */
export type UnaryAnswer<O extends DescMessage> = MessageShape<O> | Uint8Array;

export interface UnaryMethod<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage> {
  kind: 'unary';
  desc: DescMethod & { input: I; output: O };
  handle(ctx: NodeContext, req: MessageShape<I>, call: CallInfo): UnaryAnswer<O> | Promise<UnaryAnswer<O>>;
}

export interface StreamMethod<I extends DescMessage = DescMessage> {
  kind: 'server_streaming';
  desc: DescMethod & { input: I };
  open(ctx: NodeContext, req: MessageShape<I>, call: CallInfo): EventStream;
}

export type GrpcMethod = UnaryMethod<any, any> | StreamMethod<any>;

/** Heights are uint64 on the wire; beyond 2^53 no block can exist. */
function height(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new NotFoundError('block not found');
  return Number(value);
}

function hashHex(h: Hash | undefined, field: string): string {
  if (h?.value.length !== 32) throw invalidArgument(`${field} must be 32 bytes`);
  return toHex(h.value);
}

function addressHex(a: Address | undefined, field: string): string {
  if (a?.value.length !== 20) throw invalidArgument(`${field} must be 20 bytes`);
  return `0x${toHex(a.value)}`;
}

function selector(req: GetBlockRequest): BlockSelector {
  const s = req.selector;
  switch (s.case) {
    case 'height':
      return { height: height(s.value.value) };
    case 'hash':
      return { hash: hashHex(s.value, 'hash') };
    case 'latest':
      if (!s.value) throw invalidArgument('latest must be true when set');
      return { latest: true };
    case 'finalized':
      if (!s.value) throw invalidArgument('finalized must be true when set');
      return { finalized: true };
    default:
      throw invalidArgument('GetBlockRequest needs a selector: height, hash, latest or finalized');
  }
}

const getBlock: UnaryMethod<typeof Native.method.getBlock.input, typeof Native.method.getBlock.output> = {
  kind: 'unary',
  desc: Native.method.getBlock,
  handle: (ctx, req: GetBlockRequest) => {
    const sel = selector(req);
    // The head and the window answer without a turn of the event loop; so does any block read before (the
    // cache of encodings); the rest comes from the store.
    const recent = findRecentBlock(ctx, sel);
    if (recent) return encodeBlock(recent);
    const cache = encodedBlockCache(ctx);
    const kept = cache && ('height' in sel || 'hash' in sel) ? cache.get(sel) : undefined;
    if (kept) return kept;
    const generation = cache?.generation ?? 0;
    return findBlock(ctx, sel).then((block) => {
      const bytes = encodeBlock(block);
      cache?.put(block, bytes, generation);
      return bytes;
    });
  },
};

const getBalance: UnaryMethod<typeof Native.method.getBalance.input, typeof Native.method.getBalance.output> = {
  kind: 'unary',
  desc: Native.method.getBalance,
  handle: (ctx, req: GetBalanceRequest) => {
    const address = addressHex(req.address, 'address');
    const bytes = req.address!.value;
    const at = req.atHeight ? height(req.atHeight.value) : undefined;
    // At the head: no promise (the state is in memory).
    const account = accountAt(ctx, address, at);
    return account instanceof Promise ? account.then((a) => encodeAccountAnswer(bytes, a)) : encodeAccountAnswer(bytes, account);
  },
};

/** A native Transaction message in the JSON shape of POST /transaction, so both check it with the same words. */
function signedTransactionJson(t: Transaction): Record<string, unknown> {
  const hex = (b: Uint8Array | undefined) => (b ? toHex(b) : '');
  return {
    txid: hex(t.txid?.value),
    from_address: t.from ? `0x${toHex(t.from.value)}` : '',
    to_address: t.to ? `0x${toHex(t.to.value)}` : '',
    amount: t.amount?.base ?? 0n,
    fee: t.fee?.base ?? 0n,
    nonce: t.nonce,
    data: t.data,
    timestamp: t.timestamp,
    chain_id: t.chainId,
    signature: hex(t.signature),
    public_key: hex(t.publicKey),
  };
}

async function broadcast(ctx: NodeContext, req: BroadcastTxRequest): Promise<string> {
  const tx = req.tx;
  if (tx.case === 'rawEthereumTx' || (tx.case === 'signedTransaction' && tx.value.raw.length > 0)) {
    const raw = tx.case === 'rawEthereumTx' ? tx.value : tx.value.raw;
    if (raw.length === 0) throw invalidArgument('raw_ethereum_tx is empty');
    return (await submitRawTransaction(ctx, raw)).txid;
  }
  if (tx.case === 'signedTransaction') {
    return (await submitTransaction(ctx, signedTransactionJson(tx.value))).txid;
  }
  throw invalidArgument('BroadcastTxRequest needs raw_ethereum_tx or signed_transaction');
}

const broadcastTx: UnaryMethod<typeof Native.method.broadcastTx.input, typeof Native.method.broadcastTx.output> = {
  kind: 'unary',
  desc: Native.method.broadcastTx,
  handle: async (ctx, req: BroadcastTxRequest) => ({
    $typeName: 'native.v1.BroadcastTxResponse',
    txid: hashMessage(await broadcast(ctx, req)),
  }),
};

const streamEvents: StreamMethod<typeof Native.method.streamEvents.input> = {
  kind: 'server_streaming',
  desc: Native.method.streamEvents,
  open: (ctx, req: StreamEventsRequest) => new EventStream(ctx, req),
};

/** The service's methods by their gRPC path (/native.v1.Native/GetBlock, ...). */
export const NATIVE_METHODS: ReadonlyMap<string, GrpcMethod> = new Map(
  [getBlock, getBalance, broadcastTx, streamEvents].map((m) => [`/${Native.typeName}/${m.desc.name}`, m as GrpcMethod]),
);
