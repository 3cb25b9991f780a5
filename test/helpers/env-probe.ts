import { type Abi, type Hex, createPublicClient, createWalletClient, encodeFunctionData, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compiled } from './contracts.js';
import { devPrivateKey, viemChain } from './evm.js';

/** Receipt waits of the override and simulation tests. */
export const WAIT = { timeout: 30_000, pollingInterval: 50 } as const;

/** The EnvProbe fixture (test/fixtures/contracts/Overrides.sol): block environment, balances, storage, precompiles. */
export const probeAbi = (): Abi => compiled('EnvProbe').abi as Abi;

/** Calldata of one of EnvProbe's functions. */
export const probeData = (functionName: string, args: unknown[] = []): Hex =>
  encodeFunctionData({ abi: probeAbi(), functionName, args });

/** viem clients of the node at `url` signing with dev account `i`. */
export function devClients(url: string, i: number) {
  const chain = viemChain(url);
  const account = privateKeyToAccount(devPrivateKey(i));
  return {
    account,
    pub: createPublicClient({ chain, transport: http(), pollingInterval: 50 }),
    wallet: createWalletClient({ account, chain, transport: http() }),
  };
}

/** Deploys EnvProbe with dev account 0; its address. */
export async function deployEnvProbe(url: string): Promise<`0x${string}`> {
  const c = devClients(url, 0);
  const hash = await c.wallet.deployContract({ abi: probeAbi(), bytecode: compiled('EnvProbe').bytecode });
  const rc = await c.pub.waitForTransactionReceipt({ hash, ...WAIT });
  if (!rc.contractAddress) throw new Error('no contract address');
  return rc.contractAddress;
}
