import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';
import { testWallet } from '../helpers/verify.js';

/** The verification fixtures as a Hardhat 2 project (hardhat.config.cjs: hardhat-verify, Sourcify mode, offline solc). */
const PROJECT = fileURLToPath(new URL('../../../test/fixtures/verify/', import.meta.url));

function hardhat(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    // Asynchronous: the node under test runs in this process and must keep serving.
    execFile(
      'npx',
      ['--no', 'hardhat', ...args],
      {
        cwd: PROJECT,
        env: {
          ...process.env,
          ...env,
          HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
          HARDHAT_DISABLE_TELEMETRY: 'true',
          CI: 'true',
          NO_COLOR: '1',
        },
        timeout: 180_000,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

test('hardhat@2 + @nomicfoundation/hardhat-verify (Sourcify mode, apiUrl <node>/sourcify): `npx hardhat verify` verifies on the node', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const env = { NATIVE_NODE_URL: n.url, NATIVE_HARDHAT_OUT: tmp.dir };
  const compiled = await hardhat(['compile'], env);
  t.is(compiled.code, 0, compiled.out);
  const artifact = JSON.parse(readFileSync(join(tmp.dir, 'artifacts/contracts/Vault.sol/Vault.json'), 'utf8'));
  const w = testWallet(t, n.url, 1);
  const tag = ethers.id('hardhat');
  const vault = await new ethers.ContractFactory(artifact.abi, artifact.bytecode, w).deploy(77n, tag);
  await vault.deploymentTransaction()!.wait(1, 60_000);
  const address = await vault.getAddress();

  const verified = await hardhat(['verify', '--network', 'native', address, '77', tag], env);
  t.is(verified.code, 0, verified.out);
  t.regex(verified.out, /Successfully verified contract Vault on Sourcify/);
  const url = `${n.url}/repository/contracts/full_match/7120/${address}/`;
  t.true(verified.out.includes(url), verified.out);
  const listing = await httpJson(url);
  t.true(listing.body.includes(`/repository/contracts/full_match/7120/${address}/metadata.json`), listing.text);
  const meta = await fetch(`${url}metadata.json`);
  t.is(meta.status, 200);
  t.is(JSON.parse(await meta.text()).settings.compilationTarget['contracts/Vault.sol'], 'Vault');
  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.body.status, 'full');
  t.true(files.body.files.some((f: { name: string }) => f.name === 'constructor-args.txt'));

  const again = await hardhat(['verify', '--network', 'native', address, '77', tag], env);
  t.is(again.code, 0, again.out);
  t.regex(again.out, /has already been verified on Sourcify/);
});
