/**
 * The callTracer on event sequences a real chain cannot reach in a test's time (the 1024-frame depth limit
 * needs more gas than a block holds), and geth's texts for revert data and failed steps.
 */
import test from 'ava';
import { ethers } from 'ethers';
import { CallTracer, type MessageEvent } from '../../ts/execution/trace/call-tracer.js';
import type { StepEvent } from '../../ts/execution/trace/types.js';
import { revertReason, vmErrorText } from '../../ts/execution/trace/vm-errors.js';

const A = '0x00000000000000000000000000000000000000aa';
const B = 0xbbn;
const addr = (s: string) => ({ toString: () => s, bytes: ethers.getBytes(s) });

function step(name: string, code: number, depth: number, stack: bigint[], gasLeft: bigint, dynamicFee: bigint): StepEvent {
  return {
    pc: 0,
    gasLeft,
    gasRefund: 0n,
    opcode: { name, fee: Number(dynamicFee), dynamicFee, code },
    stack,
    depth,
    memory: new Uint8Array([1, 2, 3, 4]),
    address: addr(A),
    codeAddress: addr(A),
  };
}

test('a CALL at the depth limit starts no message: its frame has geth error, the gas it was given, no gas used', (t) => {
  const tracer = new CallTracer({ onlyTopCall: false, withLog: false }, 100_000n);
  const top: MessageEvent = {
    depth: 0,
    caller: addr(A),
    to: addr(A),
    value: 0n,
    data: new Uint8Array(),
    gasLimit: 79_000n,
    delegatecall: false,
    isStatic: false,
  };
  tracer.enter(top);
  // CALL(gas 50000, to 0xbb, value 5, args memory[1..3)), made by a frame at ethereumjs depth 1024.
  tracer.step(step('CALL', 0xf1, 1024, [0n, 0n, 2n, 1n, 5n, B, 50_000n], 64_100n, 9_100n));
  tracer.step(step('POP', 0x50, 1024, [0n], 40_000n, 2n));
  tracer.exit({ execResult: { executionGasUsed: 30_000n, returnValue: new Uint8Array() } });
  const result = tracer.result(51_000n);
  t.deepEqual(result.calls, [
    {
      type: 'CALL',
      from: A,
      to: `0x${'0'.repeat(38)}bb`,
      value: '0x5',
      // min(50000, all but a 64th of 64100 - 9100) + the 2300 stipend of a call with value
      gas: ethers.toQuantity(50_000n + 2300n),
      gasUsed: '0x0',
      input: '0x0203',
      error: 'max call depth exceeded',
    },
  ]);
  t.like(result, { type: 'CALL', from: A, to: A, gas: ethers.toQuantity(100_000n), gasUsed: ethers.toQuantity(51_000n) });
  t.is(result.output, undefined);
});

test('revertReason as geth: Error(string), known and unknown panic codes, nothing for other data', (t) => {
  const err = ethers.getBytes(`0x08c379a0${ethers.AbiCoder.defaultAbiCoder().encode(['string'], ['nope']).slice(2)}`);
  t.is(revertReason(err), 'nope');
  const panic = (code: bigint) => ethers.getBytes(`0x4e487b71${ethers.toBeHex(code, 32).slice(2)}`);
  t.is(revertReason(panic(0x12n)), 'division or modulo by zero');
  t.is(revertReason(panic(0x99n)), 'unknown panic code: 0x99');
  t.is(revertReason(ethers.getBytes('0x12345678')), undefined);
  t.is(revertReason(err.subarray(0, 40)), undefined);
});

test('geth error texts from ethereumjs errors and the failing step', (t) => {
  t.is(vmErrorText('invalid JUMP at 0xabc:12', undefined, false), 'invalid jump destination');
  t.is(vmErrorText('invalid opcode', { op: 0xfe, stackLength: 0, paid: true }, false), 'invalid opcode: INVALID');
  t.is(vmErrorText('invalid opcode', { op: 0x21, stackLength: 0, paid: true }, false), 'invalid opcode: opcode 0x21 not defined');
  t.is(vmErrorText('stack underflow', { op: 0x55, stackLength: 1, paid: true }, false), 'stack underflow (1 <=> 2)');
  t.is(vmErrorText('stack overflow', { op: 0x80, stackLength: 1024, paid: true }, false), 'stack limit reached 1024 (1023)');
  t.is(vmErrorText('out of gas', { op: 0xf3, stackLength: 2, paid: true }, true), 'contract creation code storage out of gas');
  t.is(vmErrorText('out of gas', { op: 0xf3, stackLength: 2, paid: false }, true), 'out of gas');
  t.is(vmErrorText('static state change', undefined, false), 'write protection');
  t.is(vmErrorText('create collision', undefined, true), 'contract address collision');
});
