import { createAddressFromString } from '@ethereumjs/util';
import test from 'ava';
import { createChainVm } from '../../ts/execution/vm-factory.js';
import { StateOverlay, StateStore } from '../../ts/state/index.js';

/** JUMP to 4, where code A has its JUMPDEST and code B a STOP (same length, different bytes). */
const CODE_A = Uint8Array.from([0x60, 0x04, 0x56, 0xfe, 0x5b, 0x00]);
const CODE_B = Uint8Array.from([0x60, 0x04, 0x56, 0xfe, 0x00, 0x5b]);

test("a chain VM keeps each code's jump analysis apart: another code (or the same bytes stored anew) is analysed for itself", async (t) => {
  const store = new StateStore();
  const overlay = new StateOverlay(store);
  const env = { chainId: 7120, hardfork: 'prague' };
  const { vm, adapter } = await createChainVm(env, overlay, store, async () => null);
  const a = createAddressFromString(`0x${'0a'.repeat(20)}`);
  const b = createAddressFromString(`0x${'0b'.repeat(20)}`);
  await adapter.putCode(a, CODE_A);
  await adapter.putCode(b, CODE_B);
  const call = async (to: typeof a) => (await vm.evm.runCall({ to, gasLimit: 100_000n })).execResult;
  for (let round = 0; round < 3; round++) {
    const ra = await call(a);
    t.is(ra.exceptionError, undefined, `round ${round}: A jumps to its JUMPDEST`);
    const rb = await call(b);
    t.regex(rb.exceptionError?.error ?? '', /^invalid JUMP/, `round ${round}: B has no JUMPDEST at 4`);
    t.true(rb.executionGasUsed > ra.executionGasUsed, 'a failed frame uses all its gas');
  }
  // A's address gets B's bytes (a new buffer): the JUMP fails there now, and A's old code is not consulted.
  await adapter.putCode(a, CODE_B);
  t.regex((await call(a)).exceptionError?.error ?? '', /^invalid JUMP/);
  await adapter.putCode(a, CODE_A);
  t.is((await call(a)).exceptionError, undefined);
});
