import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { compiled } from '../helpers/contracts.js';
import { devKey, rpcOk } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

/** The hardhat@2 project (config + script) in the source tree; hardhat resolves from the repo's node_modules. */
const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/hardhat/', import.meta.url));

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    // Asynchronous on purpose: the node under test runs in this process and must keep serving.
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('hardhat@2: `npx hardhat run --network native` deploys precompiled bytecode with locally signed dev accounts', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const box = compiled('Box');
  const artifact = join(tmp.dir, 'Box.json');
  const args = ethers.AbiCoder.defaultAbiCoder().encode(['uint256'], [42n]);
  writeFileSync(artifact, JSON.stringify({ bytecode: box.bytecode, args }));

  const r = await run(
    'npx',
    ['--no', 'hardhat', 'run', '--no-compile', '--network', 'native', 'scripts/deploy.cjs'],
    FIXTURE,
    {
      ...process.env,
      NATIVE_RPC_URL: `${n.url}/rpc`,
      NATIVE_ARTIFACT: artifact,
      HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
      HARDHAT_DISABLE_TELEMETRY: 'true',
      CI: 'true',
      NO_COLOR: '1',
      npm_config_update_notifier: 'false',
    },
    90_000,
  );
  t.is(r.code, 0, `hardhat failed:\n${r.stdout}\n${r.stderr}`);
  const line = r.stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  t.truthy(line, r.stdout);
  const out = JSON.parse(line!) as { deployer: string; txHash: string; address: string; chainId: string; status: string };
  t.is(out.chainId, '0x1bd0');
  t.is(out.status, '0x1');
  t.is(out.deployer.toLowerCase(), devKey(0).address);
  t.is(out.address.toLowerCase(), ethers.getCreateAddress({ from: out.deployer, nonce: 0 }).toLowerCase());

  // The node serves what hardhat deployed: code, constructor-set storage, a working call.
  t.is(await rpcOk(n.url, 'eth_getCode', [out.address, 'latest']), box.deployedBytecode);
  t.is(BigInt(await rpcOk(n.url, 'eth_getStorageAt', [out.address, '0x0', 'latest'])), 42n);
  const iface = new ethers.Interface(box.abi);
  const value = await rpcOk(n.url, 'eth_call', [{ to: out.address, data: iface.encodeFunctionData('value') }, 'latest']);
  t.is(BigInt(value), 42n);
  const tx = await rpcOk(n.url, 'eth_getTransactionByHash', [out.txHash]);
  t.is(tx.to, null);
  t.is(tx.chainId, '0x1bd0');
  const receipt = await rpcOk(n.url, 'eth_getTransactionReceipt', [out.txHash]);
  t.is(receipt.contractAddress, out.address.toLowerCase());
});
