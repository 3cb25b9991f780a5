/**
 * Calls and logs decoded with a verified contract's ABI (viem's decoder), for the explorer's transaction page.
 * Every value is turned into a display string here (addresses lowercase, integers in decimal, bytes as hex,
 * arrays and tuples as JSON with bigints as decimal strings); a call or log the ABI does not describe gives null.
 */
import type { Abi, AbiEvent, AbiFunction } from 'viem';

/** viem, loaded on the first decode: importing it costs ~0.15 s, which a node's start should not pay. */
let viemLoading: Promise<typeof import('viem')> | undefined;
const viem = () => {
  viemLoading ??= import('viem');
  return viemLoading;
};

export interface DecodedArg {
  name: string;
  type: string;
  value: string;
}

export interface Decoded {
  /** e.g. "transfer(address to, uint256 value)" */
  signature: string;
  args: DecodedArg[];
}

const show = (v: unknown): string =>
  typeof v === 'string'
    ? v.toLowerCase().startsWith('0x')
      ? v.toLowerCase()
      : v
    : typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

function signatureOf(item: AbiFunction | AbiEvent): string {
  return `${item.name}(${item.inputs.map((i) => `${i.type}${i.name ? ` ${i.name}` : ''}`).join(', ')})`;
}

function argsOf(item: AbiFunction | AbiEvent, values: unknown): DecodedArg[] {
  const list = Array.isArray(values) ? values : item.inputs.map((i) => (values as Record<string, unknown>)[i.name ?? '']);
  return item.inputs.map((input, k) => ({ name: input.name || `arg${k}`, type: input.type, value: show(list[k]) }));
}

/** The function call `input` makes on a contract with this ABI, or null. */
export async function decodeCall(abi: readonly unknown[], input: string): Promise<Decoded | null> {
  if (input.length < 10) return null;
  const { decodeFunctionData } = await viem();
  try {
    const d = decodeFunctionData({ abi: abi as Abi, data: input as `0x${string}` });
    const fn = (abi as Abi).find(
      (x): x is AbiFunction => x.type === 'function' && x.name === d.functionName && x.inputs.length === (d.args?.length ?? 0),
    );
    return fn ? { signature: signatureOf(fn), args: argsOf(fn, d.args ?? []) } : null;
  } catch {
    return null;
  }
}

/** The event a log with these topics and data is, on a contract with this ABI, or null. */
export async function decodeLog(abi: readonly unknown[], topics: readonly string[], data: string): Promise<Decoded | null> {
  if (topics.length === 0) return null;
  const { decodeEventLog } = await viem();
  try {
    const d = decodeEventLog({
      abi: abi as Abi,
      topics: topics as [`0x${string}`, ...`0x${string}`[]],
      data: data as `0x${string}`,
    });
    const ev = (abi as Abi).find((x): x is AbiEvent => x.type === 'event' && x.name === d.eventName);
    return ev ? { signature: signatureOf(ev), args: argsOf(ev, d.args) } : null;
  } catch {
    return null;
  }
}
