/** Shared by the rest-*.test.ts files: the spec's REST endpoint list and a node with a few confirmed transfers. */
import type { ExecutionContext } from 'ava';
import { restRoutes } from '../../ts/api/index.js';
import { schemaError } from '../../ts/api/schema.js';
import type { RouteDef } from '../../ts/api/types.js';
import {
  DEV_MNEMONIC,
  type KeyPair,
  keyPairFromMnemonic,
  type SignedTransaction,
  signTransaction,
  ZERO_ADDRESS,
} from '../../ts/ledger/index.js';
import { type JsonResponse, type TestNode, httpJson } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

export const keys = Array.from({ length: 5 }, (_, i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
export const [alice, bob, carol, dave, erin] = keys;
export const CHAIN_ID = 7120;

/**
 * Every REST endpoint of the spec ("Endpoints": ops, chain, accounts, transactions, tokens, validators/staking/
 * epochs/stats/rich list/admin), as method + path template. The tables list 50 method/path pairs on 48 paths.
 */
export const SPEC_ENDPOINTS: [string, string][] = [
  ['GET', '/'],
  ['GET', '/health'],
  ['GET', '/native_status'],
  ['GET', '/metrics'],
  ['GET', '/chain/info'],
  ['GET', '/chain/blocks'],
  ['GET', '/chain/blocks/{index}'],
  ['GET', '/blocks'],
  ['GET', '/blocks/{height}'],
  ['GET', '/chain/validate'],
  ['GET', '/chain/state-root/{height}'],
  ['GET', '/chain/performance'],
  ['GET', '/accounts/{address}/balance'],
  ['GET', '/accounts/{address}/nonce'],
  ['GET', '/accounts/{address}/history'],
  ['GET', '/accounts/{address}/tokens'],
  ['GET', '/accounts/{address}/code'],
  ['GET', '/accounts/top'],
  ['GET', '/address/{address}/history'],
  ['GET', '/address/{address}/info'],
  ['GET', '/address/{address}/proof'],
  ['GET', '/wallets/{address}'],
  ['POST', '/transactions'],
  ['GET', '/transactions'],
  ['GET', '/transactions/{txid}'],
  ['GET', '/mempool'],
  ['GET', '/tokens'],
  ['GET', '/tokens/{contract}'],
  ['GET', '/tokens/{contract}/balance/{addr}'],
  ['GET', '/tokens/{contract}/holders'],
  ['GET', '/tokens/{contract}/holders-v2'],
  ['GET', '/tokens/{contract}/trades'],
  ['GET', '/tokens/{contract}/transfers'],
  ['POST', '/tokens/deploy'],
  ['POST', '/tokens/{contract}/transfer'],
  ['POST', '/tokens/{contract}/burn'],
  ['GET', '/validators'],
  ['POST', '/validators'],
  ['GET', '/validators/{address}/delegators'],
  ['GET', '/validators/{address}/rewards'],
  ['GET', '/validators/{address}/blocks-over-time'],
  ['GET', '/staking/validators'],
  ['GET', '/staking/delegations/{address}'],
  ['GET', '/staking/unbonding/{address}'],
  ['POST', '/staking/register'],
  ['GET', '/epoch/current'],
  ['GET', '/epoch/history'],
  ['GET', '/stats/daily'],
  ['GET', '/richlist'],
  ['GET', '/admin/log'],
];

/** Spec path template -> the registered route (find-my-way pattern); parameter names may differ. */
export function routeFor(method: string, template: string): RouteDef | undefined {
  const shape = (p: string) => p.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '*');
  return restRoutes.find((r) => r.method === method && shape(r.path) === shape(template));
}

/** Checks a 200 body against the route's declared response schema. */
export function assertMatchesSchema(t: ExecutionContext, route: RouteDef | undefined, res: JsonResponse, what: string): void {
  if (!route?.response) return;
  const err = schemaError(res.body, route.response);
  t.is(err, null, `${what}: body does not match the declared schema: ${err}\n${res.text.slice(0, 300)}`);
}

export const transfer = (key: KeyPair, to: string, nonce: bigint, amount = 1_000n + nonce, data = ''): SignedTransaction =>
  signTransaction({ from: key.address, to, amount, fee: 10_000n, nonce, data, chain_id: CHAIN_ID }, key);

export const tokenTx = (key: KeyPair, data: string, to = ZERO_ADDRESS, nonce = 0n): SignedTransaction =>
  signTransaction({ from: key.address, to, amount: 0n, fee: 10_000n, nonce, data, chain_id: CHAIN_ID }, key);

export async function post(
  n: TestNode,
  path: string,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return httpJson(`${n.url}${path}`, { method: 'POST', json, headers });
}

/** Submit transactions in order and wait until every one is confirmed; returns them. */
export async function submitAndConfirm(n: TestNode, txs: SignedTransaction[]): Promise<SignedTransaction[]> {
  for (const tx of txs) {
    const r = await post(n, '/transactions', { transaction: tx });
    if (r.status !== 200) throw new Error(`submit failed: ${r.status} ${r.text}`);
  }
  const last = txs[txs.length - 1];
  await waitFor(
    async () => (await httpJson(`${n.url}/transactions/${last.txid}`)).body?.status === 'confirmed',
    30_000,
    'inclusion',
  );
  await waitFor(async () => (await httpJson(`${n.url}/mempool`)).body?.size === 0, 30_000, 'empty mempool');
  return txs;
}

/**
 * The seed used by the walk and pagination tests: alice sends 4 (to bob, carol, dave and herself),
 * bob sends 2 (to alice, erin), carol 1 (to erin). 7 transactions in total.
 */
export function seedTransfers(): SignedTransaction[] {
  return [
    transfer(alice, bob.address, 0n),
    transfer(alice, carol.address, 1n),
    transfer(alice, dave.address, 2n),
    transfer(alice, alice.address, 3n),
    transfer(bob, alice.address, 0n),
    transfer(bob, erin.address, 1n),
    transfer(carol, erin.address, 0n),
  ];
}
