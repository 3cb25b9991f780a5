/**
 * The schema: the spec's message names, field names and numbers (part C), read from the .proto the way any
 * client reads it (proto-loader); the committed generated code matches what scripts/gen-proto.sh makes now;
 * the gRPC flags.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { ConfigError, parseConfig } from '../../ts/node/index.js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_FILE } from './client.js';
import { Native } from '../../ts/grpc/gen/native/v1/native_pb.js';
import { GRPC_WEB_PATH_PREFIX } from '../../ts/grpc/web-route.js';

/** The schema with the field names as written in the .proto (keepCase). */
const packageDefinition = loadSync(PROTO_FILE, { keepCase: true });

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

type Fields = Record<string, { number: number; type: string; label?: string; oneof?: string }>;

function fieldsOf(name: string): Fields {
  const t = packageDefinition[`native.v1.${name}`] as unknown as { type: { field: any[]; oneofDecl: { name: string }[] } };
  const out: Fields = {};
  for (const f of t.type.field) {
    out[f.name] = {
      number: f.number,
      type: f.typeName || f.type.replace(/^TYPE_/, '').toLowerCase(),
      label: f.label,
      oneof: f.oneofIndex === undefined || f.proto3Optional ? undefined : t.type.oneofDecl[f.oneofIndex]?.name,
    };
  }
  return out;
}

test("the spec's messages: names, field names, numbers and types exactly", (t) => {
  const req = fieldsOf('GetBlockRequest');
  t.like(req, {
    height: { number: 1, type: 'BlockHeight', oneof: 'selector' },
    hash: { number: 2, type: 'Hash', oneof: 'selector' },
    latest: { number: 3, type: 'bool', oneof: 'selector' },
    finalized: { number: 4, type: 'bool', oneof: 'selector' },
  });
  t.like(fieldsOf('BlockHeight'), { value: { number: 1, type: 'uint64' } });
  t.like(fieldsOf('Hash'), { value: { number: 1, type: 'bytes' } });
  t.like(fieldsOf('Address'), { value: { number: 1, type: 'bytes' } });
  t.like(fieldsOf('Amount'), { base: { number: 1, type: 'uint64' } });
  t.like(fieldsOf('Block'), {
    index: { number: 1, type: 'uint64' },
    hash: { number: 2, type: 'Hash' },
    parent_hash: { number: 3, type: 'Hash' },
    state_root: { number: 4, type: 'Hash' },
    timestamp: { number: 5, type: 'uint64' },
    proposer: { number: 6, type: 'Address' },
    round: { number: 7, type: 'uint32' },
    transactions: { number: 8, type: 'Transaction', label: 'LABEL_REPEATED' },
    justification: { number: 9, type: 'bytes' },
  });
  t.like(fieldsOf('GetBalanceRequest'), {
    address: { number: 1, type: 'Address' },
    at_height: { number: 2, type: 'BlockHeight' },
  });
  t.like(fieldsOf('Account'), {
    address: { number: 1, type: 'Address' },
    balance: { number: 2, type: 'Amount' },
    nonce: { number: 3, type: 'uint64' },
    storage_root: { number: 4, type: 'Hash' },
    code_hash: { number: 5, type: 'Hash' },
  });
  t.like(fieldsOf('ChainEvent'), {
    block_finalized: { type: 'BlockFinalized', oneof: 'event' },
    lagged: { type: 'Lagged', oneof: 'event' },
  });
  t.like(fieldsOf('BlockFinalized'), { block: { type: 'Block' } });
  t.like(fieldsOf('Lagged'), { skipped_count: { type: 'uint64' } });
  t.like(fieldsOf('StreamEventsRequest'), { filter: { type: 'EventFilter' }, from_sequence: { type: 'uint64' } });
  const service = packageDefinition['native.v1.Native'] as Record<string, { path: string; responseStream: boolean }>;
  t.deepEqual(
    Object.values(service).map((m) => [m.path, m.responseStream]),
    [
      ['/native.v1.Native/GetBlock', false],
      ['/native.v1.Native/GetBalance', false],
      ['/native.v1.Native/BroadcastTx', false],
      ['/native.v1.Native/StreamEvents', true],
    ],
  );
});

test('the committed TypeScript is what scripts/gen-proto.sh generates from the .proto now', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'native-proto-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(ROOT, 'proto'), join(dir, 'proto'), { recursive: true });
  // The template writes to ../ts/grpc/gen and runs ../node_modules/.bin/protoc-gen-es relative to proto/.
  const template = readFileSync(join(dir, 'proto/buf.gen.yaml'), 'utf8').replace(
    '../node_modules/.bin/protoc-gen-es',
    join(ROOT, 'node_modules/.bin/protoc-gen-es'),
  );
  writeFileSync(join(dir, 'proto/buf.gen.yaml'), template);
  execFileSync(join(ROOT, 'node_modules/.bin/buf'), ['generate'], { cwd: join(dir, 'proto'), stdio: 'pipe' });
  execFileSync(join(ROOT, 'node_modules/.bin/buf'), ['lint'], { cwd: join(dir, 'proto'), stdio: 'pipe' });
  const generated = join(dir, 'ts/grpc/gen/native/v1');
  const committed = join(ROOT, 'ts/grpc/gen/native/v1');
  t.deepEqual(readdirSync(generated), readdirSync(committed));
  for (const f of readdirSync(generated)) {
    t.is(
      readFileSync(join(generated, f), 'utf8'),
      readFileSync(join(committed, f), 'utf8'),
      `${f} is current (run npm run gen:proto)`,
    );
  }
});

test('gRPC flags: dev listens on 50051 by default, mainnet and testnet not; off, 0, TLS pairs, reflection', (t) => {
  t.is(parseConfig(['--dev'], {}).grpcPort, 50051);
  t.is(parseConfig([], {}).grpcPort, null);
  t.is(parseConfig(['--network', 'testnet'], {}).grpcPort, null);
  t.is(parseConfig(['--network', 'testnet', '--grpc-port', '443'], {}).grpcPort, 443);
  t.is(parseConfig(['--dev', '--grpc-port', 'off'], {}).grpcPort, null);
  t.is(parseConfig(['--dev'], { NATIVE_GRPC_PORT: 'off' }).grpcPort, null);
  t.is(parseConfig(['--dev', '--grpc-port', '0'], { NATIVE_GRPC_PORT: 'off' }).grpcPort, 0, 'flags win over env');
  t.throws(() => parseConfig(['--dev', '--grpc-port', '70000'], {}), { instanceOf: ConfigError });
  t.throws(() => parseConfig(['--dev', '--grpc-port', 'x'], {}), { instanceOf: ConfigError });
  t.throws(() => parseConfig(['--dev', '--grpc-tls-cert', 'c.pem'], {}), { instanceOf: ConfigError, message: /go together/ });
  const tls = parseConfig(['--dev'], { NATIVE_GRPC_TLS_CERT: 'c.pem', NATIVE_GRPC_TLS_KEY: 'k.pem' });
  t.is(tls.grpcTlsCert, 'c.pem');
  t.is(tls.grpcTlsKey, 'k.pem');
  t.false(parseConfig(['--dev'], {}).grpcReflection);
  t.true(parseConfig(['--dev', '--grpc-reflection'], {}).grpcReflection);
  t.true(parseConfig(['--dev'], { NATIVE_GRPC_REFLECTION: 'true' }).grpcReflection);
  t.throws(() => parseConfig(['--dev'], { NATIVE_GRPC_REFLECTION: 'yes' }), { instanceOf: ConfigError });
});

test('the gRPC-Web route known before gRPC loads is the generated service name', (t) => {
  t.is(GRPC_WEB_PATH_PREFIX, `/${Native.typeName}/`);
});
