/**
 * gRPC-Web on the main HTTP port, on both HTTP backends: the Connect gRPC-Web client (@connectrpc/connect-web
 * on Node's fetch) for unary calls and streams, and raw requests for the wire details: frames, the trailers
 * frame (flag 0x80), grpc-web-text (base64), the spec's CORS headers, the 204 preflight, errors, deadlines.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import test from 'ava';
import {
  BlockSchema,
  ChainEventSchema,
  GetBlockRequestSchema,
  Native,
  StreamEventsRequestSchema,
} from '../../ts/grpc/gen/native/v1/native_pb.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const SPEC_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type, X-Grpc-Web, X-User-Agent, Grpc-Timeout',
  'access-control-expose-headers': 'Grpc-Status, Grpc-Message, Grpc-Encoding, Grpc-Accept-Encoding',
  'access-control-max-age': '86400',
};

const frame = (payload: Uint8Array, flag = 0): Buffer => {
  const out = Buffer.alloc(5 + payload.length);
  out[0] = flag;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
};

/** Splits a gRPC-Web body into frames. */
function frames(body: Buffer): { flag: number; payload: Buffer }[] {
  const out: { flag: number; payload: Buffer }[] = [];
  for (let i = 0; i < body.length; ) {
    const len = body.readUInt32BE(i + 1);
    out.push({ flag: body[i], payload: body.subarray(i + 5, i + 5 + len) });
    i += 5 + len;
  }
  return out;
}

const trailers = (payload: Buffer): Record<string, string> =>
  Object.fromEntries(
    payload
      .toString('latin1')
      .split('\r\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  );

/** base64 of each chunk separately padded (as the server writes them), decoded chunk by padded chunk. */
const decodeText = (text: string): Buffer => Buffer.concat((text.match(/[^=]+=*/g) ?? []).map((c) => Buffer.from(c, 'base64')));

for (const backend of ['uws', 'node'] as const) {
  test(`${backend}: Connect gRPC-Web client: unary GetBlock, errors as ConnectError, StreamEvents in order`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 100 });
    t.teardown(() => n.stop());
    await waitFor(() => n.node.ctx.chain.height >= 2, 15_000, 'blocks');
    const client = createClient(Native, createGrpcWebTransport({ baseUrl: n.url }));
    const b = await client.getBlock({ selector: { case: 'height', value: { value: 1n } } });
    t.is(b.index, 1n);
    t.is(Buffer.from(b.hash!.value).toString('hex'), (await n.node.ctx.chain.blocks.getBlock(1))!.hash);
    const err = await t.throwsAsync(client.getBlock({ selector: { case: 'height', value: { value: 10n ** 9n } } }));
    t.true(err instanceof ConnectError);
    t.is((err as ConnectError).code, Code.NotFound);
    t.is((err as ConnectError).rawMessage, 'block not found');
    const past = await client.getBalance({ address: { value: new Uint8Array(20) }, atHeight: { value: 1n } });
    t.is(past.height?.value, 1n);
    const ahead = await t.throwsAsync(
      client.getBalance({ address: { value: new Uint8Array(20) }, atHeight: { value: 10n ** 9n } }),
    );
    t.is((ahead as ConnectError).code, Code.NotFound);

    const seen: bigint[] = [];
    const ac = new AbortController();
    for await (const e of client.streamEvents({}, { signal: ac.signal })) {
      if (e.event.case === 'blockFinalized') seen.push(e.event.value.block!.index);
      if (seen.length === 4) {
        ac.abort();
        break;
      }
    }
    t.is(seen.length, 4);
    t.true(
      seen.every((h, i) => i === 0 || h === seen[i - 1] + 1n),
      `consecutive: ${seen}`,
    );
    await waitFor(
      () => n.node.ctx.events!.listenerCount === 0,
      10_000,
      `the stream released on the server (${n.node.ctx.events!.listenerCount})`,
    );
    // REST and JSON-RPC share the port.
    t.is((await httpJson(`${n.url}/health`)).status, 200);
  });

  test(`${backend}: wire: frames, trailers frame 0x80, grpc-web-text, CORS exactly as the spec, 204 preflight`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 100 });
    t.teardown(() => n.stop());
    const url = `${n.url}/native.v1.Native/GetBlock`;

    const pre = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'http://example.test', 'access-control-request-method': 'POST' },
    });
    t.is(pre.status, 204);
    for (const [k, v] of Object.entries(SPEC_CORS)) t.is(pre.headers.get(k), v, k);

    const req = toBinary(
      GetBlockRequestSchema,
      create(GetBlockRequestSchema, { selector: { case: 'height', value: { value: 0n } } }),
    );
    const bin = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      body: frame(req),
    });
    t.is(bin.status, 200);
    t.is(bin.headers.get('content-type'), 'application/grpc-web+proto');
    for (const [k, v] of Object.entries(SPEC_CORS)) t.is(bin.headers.get(k), v, k);
    const f = frames(Buffer.from(await bin.arrayBuffer()));
    t.is(f.length, 2);
    t.is(f[0].flag, 0x00);
    t.is(fromBinary(BlockSchema, f[0].payload).index, 0n);
    t.is(f[1].flag, 0x80);
    t.deepEqual(trailers(f[1].payload), { 'grpc-status': '0' });

    const text = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web-text' },
      body: frame(req).toString('base64'),
    });
    t.is(text.headers.get('content-type'), 'application/grpc-web-text+proto');
    const tf = frames(decodeText(await text.text()));
    t.is(fromBinary(BlockSchema, tf[0].payload).index, 0n);
    t.is(tf[1].flag, 0x80);

    // Errors: HTTP 200, the status in the trailers frame (grpc-message percent-encoded).
    const missing = toBinary(
      GetBlockRequestSchema,
      create(GetBlockRequestSchema, { selector: { case: 'height', value: { value: 10n ** 12n } } }),
    );
    const nf = frames(
      Buffer.from(
        await (
          await fetch(url, { method: 'POST', headers: { 'content-type': 'application/grpc-web' }, body: frame(missing) })
        ).arrayBuffer(),
      ),
    );
    t.is(nf.length, 1);
    t.is(nf[0].flag, 0x80);
    t.deepEqual(trailers(nf[0].payload), { 'grpc-status': '5', 'grpc-message': 'block not found' });

    const unknown = await fetch(`${n.url}/native.v1.Native/Nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web' },
      body: frame(new Uint8Array(0)),
    });
    t.is(trailers(frames(Buffer.from(await unknown.arrayBuffer()))[0].payload)['grpc-status'], '12');
    const badFrame = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web' },
      body: Buffer.from([0, 0, 0]),
    });
    t.is(trailers(frames(Buffer.from(await badFrame.arrayBuffer()))[0].payload)['grpc-status'], '3');
    const compressed = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web' },
      body: frame(req, 1),
    });
    t.is(trailers(frames(Buffer.from(await compressed.arrayBuffer()))[0].payload)['grpc-status'], '12');
    const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.is(json.status, 415);
    t.is(json.headers.get('access-control-allow-origin'), '*');
    const get = await fetch(url);
    t.is(get.status, 405);

    const metrics = (await httpJson(`${n.url}/metrics`)).text;
    t.regex(metrics, /native_grpc_calls_total\{method="GetBlock",code="OK",transport="grpc-web"\} [1-9]/);
    t.regex(metrics, /native_grpc_calls_total\{method="GetBlock",code="NOT_FOUND",transport="grpc-web"\} 1/);
  });

  test(`${backend}: server streaming in grpc-web-text; grpc-timeout ends it with DEADLINE_EXCEEDED in the trailers`, async (t) => {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 100 });
    t.teardown(() => n.stop());
    const req = toBinary(StreamEventsRequestSchema, create(StreamEventsRequestSchema, {}));
    const res = await fetch(`${n.url}/native.v1.Native/StreamEvents`, {
      method: 'POST',
      // Long enough for a few 100 ms blocks even on a loaded machine; the stream ends only by the deadline.
      headers: { 'content-type': 'application/grpc-web-text', 'grpc-timeout': '4000m' },
      body: frame(req).toString('base64'),
    });
    t.is(res.status, 200);
    const f = frames(decodeText(await res.text()));
    const last = f.at(-1)!;
    t.is(last.flag, 0x80);
    t.deepEqual(trailers(last.payload), { 'grpc-status': '4', 'grpc-message': 'Deadline exceeded' });
    const hs = f.slice(0, -1).map((x) => fromBinary(ChainEventSchema, x.payload).sequence);
    t.true(hs.length >= 1, `blocks before the deadline: ${hs.length}`);
    t.true(hs.every((h, i) => i === 0 || h === hs[i - 1] + 1n));
    const bad = await fetch(`${n.url}/native.v1.Native/StreamEvents`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web', 'grpc-timeout': 'soon' },
      body: frame(req),
    });
    t.is(trailers(frames(Buffer.from(await bad.arrayBuffer()))[0].payload)['grpc-status'], '3');
  });
}
