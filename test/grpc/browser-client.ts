/**
 * The browser side of the gRPC-Web test, bundled with esbuild and run in headless Chromium: the Connect
 * gRPC-Web client (binary format) against the node's API port, from another origin (CORS and preflight).
 */
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import { Native } from '../../ts/grpc/gen/native/v1/native_pb.js';

export interface BrowserResult {
  block: { index: string; hash: string; proposer: string };
  notFound: string;
  streamed: string[];
  userAgent: string;
}

const hex = (b: Uint8Array | undefined): string => Array.from(b ?? [], (x) => x.toString(16).padStart(2, '0')).join('');

async function run(baseUrl: string, height: number, blocks: number): Promise<BrowserResult> {
  const client = createClient(Native, createGrpcWebTransport({ baseUrl }));
  const b = await client.getBlock({ selector: { case: 'height', value: { value: BigInt(height) } } });
  let notFound = '';
  try {
    await client.getBlock({ selector: { case: 'height', value: { value: 10n ** 12n } } });
  } catch (err) {
    notFound = err instanceof ConnectError ? `${Code[err.code]}: ${err.rawMessage}` : String(err);
  }
  const streamed: string[] = [];
  const ac = new AbortController();
  for await (const e of client.streamEvents({}, { signal: ac.signal })) {
    if (e.event.case === 'blockFinalized') streamed.push(String(e.event.value.block?.index));
    if (streamed.length === blocks) {
      ac.abort();
      break;
    }
  }
  return {
    block: { index: String(b.index), hash: hex(b.hash?.value), proposer: hex(b.proposer?.value) },
    notFound,
    streamed,
    userAgent: (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent,
  };
}

(globalThis as unknown as { runGrpcWeb: typeof run }).runGrpcWeb = run;
