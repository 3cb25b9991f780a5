/**
 * Constructor arguments from the creation transaction's input tail, decoded with the contract's ABI. Taken
 * as arguments only when they decode and encode back to the same bytes (otherwise the tail is not what the
 * constructor read, and the creation does not match).
 */
import type { AbiParameter } from 'viem';

export interface DecodedArguments {
  /** The values, bigints as decimal strings, bytes as 0x hex (JSON-safe). */
  values: unknown[];
}

function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

/** The constructor's inputs from an ABI (none when it declares no constructor). */
function constructorInputs(abi: readonly unknown[]): readonly AbiParameter[] {
  const ctor = abi.find((e) => (e as { type?: string }).type === 'constructor') as { inputs?: AbiParameter[] } | undefined;
  return ctor?.inputs ?? [];
}

/** Decode `argsHex` (0x hex) as the constructor's arguments; null when they are not exactly that. */
export async function decodeConstructorArguments(abi: readonly unknown[], argsHex: string): Promise<DecodedArguments | null> {
  const inputs = constructorInputs(abi);
  if (inputs.length === 0) return argsHex === '0x' ? { values: [] } : null;
  // Loaded on first use: viem's ABI coder costs ~0.2 s to import and only verification needs it here.
  const { decodeAbiParameters, encodeAbiParameters } = await import('viem/utils');
  try {
    const values = decodeAbiParameters(inputs, argsHex as `0x${string}`);
    if (encodeAbiParameters(inputs, values as unknown[]).toLowerCase() !== argsHex.toLowerCase()) return null;
    return { values: jsonSafe([...values]) as unknown[] };
  } catch {
    return null;
  }
}
