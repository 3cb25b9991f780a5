import test from 'ava';
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { ethersProvider, ethersWallet } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';
import { CONTRACTS_DIR, build, deploy, filesOf, fixture, postVerify } from '../helpers/verify.js';

const MAIN = fileURLToPath(new URL('../../ts/verify/main.js', import.meta.url));

interface Child {
  proc: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
  port: number;
}

/** Run `node dist/ts/verify/main.js args...`; with `listen`, wait for its "listening" line and port. */
async function spawnVerifier(args: string[], listen = true): Promise<Child> {
  const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  let port = 0;
  proc.stdout?.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n').filter(Boolean)) {
      logs.push(line);
      try {
        const o = JSON.parse(line) as { msg?: string; port?: number };
        if (o.msg === 'verification service listening' && o.port) port = o.port;
      } catch {
        /* not JSON */
      }
    }
  });
  proc.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  if (listen) {
    await waitFor(() => port || proc.exitCode !== null, 60_000, 'the verifier to listen');
    if (!port) throw new Error(`verifier exited early:\n${logs.join('\n')}`);
  }
  return { proc, logs, exited, port };
}

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

test('standalone: `main.js --node-url` verifies over JSON-RPC (creation found through native_getContractCreation), serves files, stops on SIGTERM', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  // The node's bare URL: it answers JSON-RPC on POST / (as geth and anvil do).
  const v = await spawnVerifier(['--node-url', n.url, '--port', '0', '--data-dir', tmp.dir, '--log-level', 'info']);
  t.teardown(() => {
    v.proc.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${v.port}`;
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const b = build({ 'contracts/Token.sol': fixture('Token.sol', CONTRACTS_DIR) }, 'contracts/Token.sol', 'Token');
  const { address, hash } = await deploy(ethersWallet(n.url, 1, provider), b, ['Standalone', 'STD', 5n * 10n ** 20n]);

  const chains = await httpJson(`${url}/chains`);
  t.deepEqual(
    chains.body.map((c: { chainId: number; supported: boolean }) => [c.chainId, c.supported]),
    [
      [7119, false],
      [7120, true],
    ],
  );
  // POST / verifies on the standalone service (like sourcify.dev/server), as does POST /verify.
  const r = await postVerify(url, { address, chain: '7120', files: filesOf(b) }, '/');
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { result: [{ address, chainId: '7120', status: 'perfect' }] });
  t.is(r.headers.get('access-control-allow-origin'), '*');
  const files = await httpJson(`${url}/files/any/7120/${address}`);
  t.is(files.body.status, 'full');
  const byName = Object.fromEntries(files.body.files.map((f: { name: string; content: string }) => [f.name, f.content]));
  t.is(byName['creator-tx-hash.txt'], hash);
  t.is(
    byName['constructor-args.txt'],
    ethers.AbiCoder.defaultAbiCoder().encode(['string', 'string', 'uint256'], ['Standalone', 'STD', 5n * 10n ** 20n]),
  );
  const v2 = await httpJson(`${url}/v2/contract/7120/${address}`);
  t.like(v2.body, { match: 'exact_match', creationMatch: 'exact_match' });
  // Its own store: the node's service has not seen this contract.
  t.is((await httpJson(`${n.url}/files/any/7120/${address}`)).status, 404);
  t.is((await postVerify(url, { address, chain: '7119', files: filesOf(b) })).status, 400);

  v.proc.kill('SIGTERM');
  t.is(await v.exited, 0);
});

test('standalone: --help exits 0; an unreachable node or a missing --node-url is a config error (exit 2)', async (t) => {
  const help = await spawnVerifier(['--help'], false);
  t.is(await help.exited, 0);
  t.regex(help.logs.join(''), /--node-url URL/);
  const none = await spawnVerifier(['--port', '0'], false);
  t.is(await none.exited, 2);
  t.regex(none.logs.join(''), /config error: --node-url is required/);
  const unreachable = await spawnVerifier(['--node-url', 'http://127.0.0.1:1', '--port', '0'], false);
  t.is(await unreachable.exited, 2);
  t.regex(unreachable.logs.join(''), /config error: cannot reach the node at http:\/\/127\.0\.0\.1:1/);
});
