/**
 * Jump destination analysis kept per contract code for the chain's VMs. @ethereumjs' interpreter analyses the
 * code of every call again before its first jump (JUMPDEST table, PUSH immediates, the opcode of every byte):
 * ~20 µs for an ERC-20 contract, 7% of a block of token transfers. The analysis depends on the code bytes and the
 * EVM's opcode table only, and the interpreter only reads it, so it is kept per code object (the state hands out
 * the same buffer for a contract while its value is cached) under the EVM's opcode table (one per hardfork).
 * Only VMs registered here use it (vm-factory.ts registers the chain's): other EVMs in the process, such as the
 * bench's bare VM, analyse as the library does. The table is each EVM's own (rebuilt, as a new object, when its
 * hardfork changes); an entry replaced in place would outdate the analyses kept under it, which is why the
 * deadline guard (deadline.ts) wraps its opcodes right after the VM is made, before its first run.
 */
import type { EVM } from '@ethereumjs/evm';

interface Analysis {
  jumps: Uint8Array;
  pushes: Record<number, bigint>;
  opcodesCached: unknown[];
}

interface InterpreterLike {
  _evm: EVM;
  _getValidJumpDestinations(code: Uint8Array): Analysis;
}

/** The interpreter class is not exported by @ethereumjs/evm: its module, next to the package's entry. */
const interpreterModule = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm')).href;
const { Interpreter } = (await import(interpreterModule)) as { Interpreter: { prototype: InterpreterLike } };

const cachingEvms = new WeakSet<EVM>();
/** Per opcode table, per code object. */
const analyses = new WeakMap<object, WeakMap<Uint8Array, Analysis>>();

const analyse = Interpreter.prototype._getValidJumpDestinations;
if (typeof analyse !== 'function') throw new Error('@ethereumjs/evm: the interpreter has no _getValidJumpDestinations');

Interpreter.prototype._getValidJumpDestinations = function (this: InterpreterLike, code: Uint8Array): Analysis {
  if (!cachingEvms.has(this._evm)) return analyse.call(this, code);
  const table = (this._evm as unknown as { _opcodeMap: object })._opcodeMap;
  let byCode = analyses.get(table);
  if (!byCode) analyses.set(table, (byCode = new WeakMap()));
  let a = byCode.get(code);
  if (!a) {
    a = analyse.call(this, code);
    byCode.set(code, a);
  }
  return a;
};

/** The EVM keeps its code analyses between calls from now on. */
export function cacheCodeAnalysis(evm: EVM): void {
  cachingEvms.add(evm);
}
