/**
 * The subscribers of the StreamEvents fan-out bench (bench/grpc.ts), in a process of their own: N gRPC
 * streams over C HTTP/2 connections. A measuring client, kept lean so that its own cost per message does not
 * pass for delivery delay: node:http2 and gRPC's 5-byte frame prefix directly, each frame's arrival time
 * taken when its last byte arrives, decoding (protobuf-es) only after the run. Reports to the parent over IPC:
 * per stream, [sequence, arrival ms since the epoch].
 */
import { type ClientHttp2Session, connect } from 'node:http2';
import { fromBinary } from '@bufbuild/protobuf';
import { ChainEventSchema } from '../ts/grpc/gen/native/v1/native_pb.js';

interface Args {
  port: number;
  streams: number;
  connections: number;
  /** Messages each stream must receive before the run ends. */
  blocks: number;
  timeoutMs: number;
}

const args = JSON.parse(process.argv[2]) as Args;
const now = (): number => performance.timeOrigin + performance.now();
/** StreamEventsRequest{} in its frame: no filter, live from now. */
const REQUEST = Buffer.alloc(5);

const sessions: ClientHttp2Session[] = Array.from({ length: args.connections }, () =>
  connect(`http://127.0.0.1:${args.port}`, { settings: { initialWindowSize: 1 << 20 } }),
);

const received: { at: number[]; frames: Buffer[] }[] = [];
let complete = 0;
let finished = false;

for (let i = 0; i < args.streams; i++) {
  const rec = { at: [] as number[], frames: [] as Buffer[] };
  received.push(rec);
  const req = sessions[i % sessions.length].request({
    ':method': 'POST',
    ':path': '/native.v1.Native/StreamEvents',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  let pending: Buffer = Buffer.alloc(0);
  req.on('data', (chunk: Buffer) => {
    const at = now();
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 5) {
      const len = pending.readUInt32BE(1);
      if (pending.length < 5 + len) break;
      rec.at.push(at);
      rec.frames.push(pending.subarray(5, 5 + len));
      pending = pending.subarray(5 + len);
      if (rec.at.length === args.blocks && ++complete === args.streams) finish('done');
    }
  });
  req.on('error', () => undefined);
  req.end(REQUEST);
}

const timer = setTimeout(() => finish('timeout'), args.timeoutMs);

function finish(why: string): void {
  if (finished) return;
  finished = true;
  clearTimeout(timer);
  const perStream = received.map((r) =>
    r.frames.map((f, i) => [Number(fromBinary(ChainEventSchema, f).sequence), r.at[i]] as [number, number]),
  );
  process.send!({ why, perStream }, () => {
    for (const s of sessions) s.destroy();
    process.exit(0);
  });
}
