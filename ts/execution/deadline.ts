import type { VM } from '@ethereumjs/vm';

/** A call ran past its time limit (eth_call / eth_estimateGas, `--rpc-evmtimeout`). */
export class CallTimeoutError extends Error {
  readonly code = 'CALL_TIMEOUT';
  constructor() {
    super('call ran past its deadline');
  }
}

/** Opcodes a long run must keep executing: jumps (every loop) and calls / creates (recursion). */
const JUMPS = [0x56, 0x57];
const FRAMES = [0xf0, 0xf1, 0xf2, 0xf4, 0xf5, 0xfa];
/** Jumps between clock reads: a clock read costs ~25 ns, a jump ~100 ns in @ethereumjs/evm. */
const JUMPS_PER_CHECK = 1024;

interface OpEntry {
  opHandler: (runState: unknown, common: unknown) => unknown;
}

/** The deadline of the call a VM runs now (epoch ms); set before each call. */
export interface DeadlineGuard {
  deadline: number;
}

/**
 * Makes the interpreter throw CallTimeoutError once Date.now() passes `guard.deadline`. The EVM has no
 * cancellation of its own and runs every step in one chain of microtasks, so nothing else gets a say
 * until it ends; the check rides on the handlers of the opcodes any long run keeps executing. A
 * non-EVM error is not an exceptional halt: the interpreter rethrows it out of runCall.
 */
export function installDeadline(vm: VM): DeadlineGuard {
  const guard: DeadlineGuard = { deadline: Number.POSITIVE_INFINITY };
  const evm = vm.evm as unknown as { _opcodeMap: OpEntry[] };
  const map = evm._opcodeMap;
  let jumps = 0;
  const check = (): void => {
    if (Date.now() > guard.deadline) throw new CallTimeoutError();
  };
  for (const op of JUMPS) {
    const entry = map[op];
    const inner = entry.opHandler;
    map[op] = {
      ...entry,
      opHandler: (runState: unknown, common: unknown) => {
        if (++jumps >= JUMPS_PER_CHECK) {
          jumps = 0;
          check();
        }
        return inner(runState, common);
      },
    };
  }
  for (const op of FRAMES) {
    const entry = map[op];
    const inner = entry.opHandler;
    map[op] = {
      ...entry,
      opHandler: (runState: unknown, common: unknown) => {
        check();
        return inner(runState, common);
      },
    };
  }
  return guard;
}
