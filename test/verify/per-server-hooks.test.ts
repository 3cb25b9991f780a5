/**
 * Two verification servers in one process report their unexpected errors to their own hooks only (the hooks
 * are the server's option, never process-wide): here both servers' chain reader points at a node that is down.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { startHttpServer } from '../../ts/http/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { CompilePool, VerificationService, VerificationStore, createVerifyHandler } from '../../ts/verify/index.js';
import { RpcChainReader } from '../../ts/verify/rpc-reader.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';
import { build, filesOf } from '../helpers/verify.js';

const BOX = 'pragma solidity ^0.8.0;\ncontract Box { uint256 public v; function set(uint256 x) external { v = x; } }\n';

/** A URL on 127.0.0.1 where nothing listens (a port taken, then freed). */
async function deadNodeUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return `http://127.0.0.1:${port}`;
}

type Teardown = { teardown(fn: () => Promise<void> | void): void };

/** A verification server for chain 7120 whose node is down; what its hooks were told lands in `errors`. */
async function server(t: Teardown, nodeUrl: string, errors: string[]): Promise<string> {
  const tmp = tempDir();
  const db = await openRocksStore(join(tmp.dir, 'db'));
  const svc = new VerificationService({
    chains: new Map([[7120, new RpcChainReader({ url: nodeUrl })]]),
    store: new VerificationStore(db),
    compiler: new CompilePool({}),
  });
  const handler = createVerifyHandler(svc, { onError: (_err, where) => errors.push(where) });
  const http = await startHttpServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) }, handler);
  t.teardown(async () => {
    await http.close();
    await svc.close();
    await db.close();
    tmp.cleanup();
  });
  return `http://127.0.0.1:${http.port}`;
}

test('two verification servers in one process: each reports its unexpected errors to its own hooks only', async (t) => {
  const nodeUrl = await deadNodeUrl();
  const errors = { a: [] as string[], b: [] as string[] };
  const a = await server(t, nodeUrl, errors.a);
  const b = await server(t, nodeUrl, errors.b);
  const box = build({ 'Box.sol': BOX }, 'Box.sol', 'Box');
  const address = '0x00000000000000000000000000000000000000b0';

  // API v1 on A: the node cannot be asked for the code, a 500 in v1's shape, reported by A alone.
  const v1 = await httpJson(`${a}/verify`, { method: 'POST', json: { address, chain: '7120', files: filesOf(box) } });
  t.is(v1.status, 500, v1.text);
  t.deepEqual(v1.body, { error: 'internal error' });
  t.deepEqual(errors, { a: ['POST /verify'], b: [] });

  // API v2 on B: the job fails in the background, reported by B alone.
  const stdJsonInput = {
    language: 'Solidity',
    sources: { 'Box.sol': { content: BOX } },
    settings: box.settings,
  };
  const compilerVersion = JSON.parse(box.metadata).compiler.version;
  const started = await httpJson(`${b}/v2/verify/7120/${address}`, {
    method: 'POST',
    json: { stdJsonInput, compilerVersion, contractIdentifier: 'Box.sol:Box' },
  });
  t.is(started.status, 202, started.text);
  const id = started.body.verificationId;
  const job = await waitFor(
    async () => {
      const r = await httpJson(`${b}/v2/verify/${id}`);
      return r.body.isJobCompleted ? r.body : null;
    },
    60_000,
    'the job to fail',
  );
  t.is(job.error.customCode, 'internal_error');
  t.deepEqual(errors, { a: ['POST /verify'], b: [`verification job ${id}`] });
});
