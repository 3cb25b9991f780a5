/** Apply one operation straight through a module's handler map (white-box tests: no chain, no fee, no nonce). */
import { type NativeModule, type OperationEnv, ZERO_ADDRESS, applyWith } from '../../ts/modules/index.js';
import type { StateOverlay } from '../../ts/state/index.js';

export function applyDirect(
  module: NativeModule,
  state: StateOverlay,
  from: string,
  nonce: bigint,
  name: string,
  fields: Record<string, bigint | string | boolean | null>,
  height = 7,
): void {
  const env = { height, timestamp: 0, proposer: ZERO_ADDRESS, chainId: 1 } as OperationEnv;
  const tx = { from_address: from, to_address: ZERO_ADDRESS, amount: 0n, fee: 0n, nonce, public_key: '' };
  applyWith(module, { state, tx, op: { name, family: module.operations[name].family, fields }, env, emit: () => {} });
}
