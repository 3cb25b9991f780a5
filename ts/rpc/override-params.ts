/**
 * geth's override parameters as JSON-RPC reads them (eth_call, eth_estimateGas, eth_createAccessList,
 * debug_traceCall, eth_simulateV1): the state override set and the block overrides. A wrong shape is
 * -32602 naming the argument and the field.
 */
import {
  type AccountOverride,
  type BlockOverrides,
  type CallArgs,
  type StateOverrideSet,
  mixedFeesError,
} from '../execution/index.js';
import type { QueryOverrides } from '../services/index.js';
import { fromHex, isAddress } from '../util/index.js';
import { parseQuantity } from './params.js';
import { type RpcError, invalidParams } from './types.js';

const DATA_RE = /^0x([0-9a-fA-F]{2})*$/;
const WORD_RE = /^0x[0-9a-fA-F]{1,64}$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const MAX_U64 = (1n << 64n) - 1n;

const ACCOUNT_FIELDS = new Set(['balance', 'nonce', 'code', 'state', 'stateDiff', 'movePrecompileToAddress']);

/** Where a value sits, for the error: `invalid argument 2: 0xab…: balance: …`. */
type Where = (what: string) => RpcError;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A quantity at `field`, with the parser's reason when it is none. */
function quantity(v: unknown, bad: Where, field: string, max?: bigint): bigint {
  let n: bigint;
  try {
    n = parseQuantity(v, 0);
  } catch (err) {
    throw bad(`${field}: ${(err as Error).message.replace(/^invalid argument 0: /, '')}`);
  }
  if (max !== undefined && n > max) throw bad(`${field}: hex number > ${max === MAX_U64 ? 64 : max.toString(2).length} bits`);
  return n;
}

function address(v: unknown, bad: Where, field: string): string {
  if (!isAddress(v)) throw bad(`${field}: address must be 0x + 40 hex characters`);
  return (v as string).toLowerCase();
}

/** A 32-byte word (a slot or its value): 0x + up to 64 hex digits, left-padded (viem and ethers send 66 characters). */
function word(v: unknown, bad: Where, field: string): string {
  if (typeof v !== 'string' || !WORD_RE.test(v)) throw bad(`${field}: expected 0x + up to 64 hex characters`);
  return v.slice(2).toLowerCase().padStart(64, '0');
}

function slots(v: unknown, bad: Where, field: string): Map<string, Uint8Array> {
  if (!isObject(v)) throw bad(`${field}: expected an object of storage slots to values`);
  const out = new Map<string, Uint8Array>();
  for (const [slot, value] of Object.entries(v)) {
    out.set(word(slot, bad, `${field} slot ${slot.slice(0, 68)}`), fromHex(word(value, bad, `${field}[${slot.slice(0, 68)}]`)));
  }
  return out;
}

function accountOverride(raw: unknown, bad: Where): AccountOverride {
  if (!isObject(raw)) throw bad('expected an object of account overrides');
  const o: AccountOverride = {};
  for (const key of Object.keys(raw)) {
    if (!ACCOUNT_FIELDS.has(key)) {
      throw bad(`unknown field ${key.slice(0, 64)} (balance, nonce, code, state, stateDiff, movePrecompileToAddress)`);
    }
  }
  const present = (k: string) => raw[k] !== undefined && raw[k] !== null;
  if (present('balance')) o.balance = quantity(raw.balance, bad, 'balance');
  if (present('nonce')) o.nonce = quantity(raw.nonce, bad, 'nonce', MAX_U64);
  if (present('code')) {
    if (typeof raw.code !== 'string' || !DATA_RE.test(raw.code)) throw bad('code: must be 0x-prefixed hex bytes');
    o.code = fromHex(raw.code);
  }
  if (present('state')) o.state = slots(raw.state, bad, 'state');
  if (present('stateDiff')) o.stateDiff = slots(raw.stateDiff, bad, 'stateDiff');
  if (present('movePrecompileToAddress')) {
    o.movePrecompileToAddress = address(raw.movePrecompileToAddress, bad, 'movePrecompileToAddress');
  }
  return o;
}

/** A state override set `{ address: { balance, nonce, code, state | stateDiff, movePrecompileToAddress } }`. */
export function parseStateOverrides(raw: unknown, where: string): StateOverrideSet | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw invalidParams(`${where}: state overrides must be an object keyed by address`);
  const out: StateOverrideSet = new Map();
  for (const [a, o] of Object.entries(raw)) {
    if (!ADDRESS_RE.test(a)) throw invalidParams(`${where}: ${a.slice(0, 64)} is not an address (0x + 40 hex characters)`);
    const addr = a.toLowerCase();
    if (out.has(addr)) throw invalidParams(`${where}: ${addr} is overridden twice`);
    out.set(
      addr,
      accountOverride(o, (what) => invalidParams(`${where}: ${addr}: ${what}`)),
    );
  }
  return out;
}

/** Fields of geth's BlockOverrides this node knows; `coinbase` is accepted as another name of feeRecipient. */
const BLOCK_FIELDS = new Set([
  'number',
  'time',
  'gasLimit',
  'feeRecipient',
  'coinbase',
  'prevRandao',
  'baseFeePerGas',
  'blobBaseFee',
  'difficulty',
  'beaconRoot',
  'withdrawals',
]);

/**
 * Block overrides `{ number, time, gasLimit, feeRecipient | coinbase, prevRandao, baseFeePerGas, blobBaseFee }`.
 * `difficulty` is accepted and ignored (post-merge, as geth). `beaconRoot` and `withdrawals` are geth's
 * eth_simulateV1 fields: refused for a single call as geth refuses them, ignored in a simulated block (the
 * chain has neither).
 */
export function parseBlockOverrides(raw: unknown, where: string, simulated = false): BlockOverrides | undefined {
  if (raw === undefined || raw === null) return undefined;
  const bad: Where = (what) => invalidParams(`${where}: ${what}`);
  if (!isObject(raw)) throw bad('block overrides must be an object');
  for (const key of Object.keys(raw)) {
    if (!BLOCK_FIELDS.has(key)) {
      throw bad(
        `unknown block override ${key.slice(0, 64)} (number, time, gasLimit, feeRecipient, prevRandao, baseFeePerGas, blobBaseFee)`,
      );
    }
    if (!simulated && (key === 'beaconRoot' || key === 'withdrawals') && raw[key] !== null) {
      throw bad(`block override "${key}" is not supported for this RPC method`);
    }
  }
  const present = (k: string) => raw[k] !== undefined && raw[k] !== null;
  const o: BlockOverrides = {};
  if (present('number')) o.number = quantity(raw.number, bad, 'number', BigInt(Number.MAX_SAFE_INTEGER));
  if (present('time')) o.time = quantity(raw.time, bad, 'time', BigInt(Number.MAX_SAFE_INTEGER));
  if (present('gasLimit')) o.gasLimit = quantity(raw.gasLimit, bad, 'gasLimit', MAX_U64);
  if (present('feeRecipient') && present('coinbase')) throw bad('feeRecipient and coinbase name the same field: give one');
  if (present('feeRecipient')) o.coinbase = address(raw.feeRecipient, bad, 'feeRecipient');
  if (present('coinbase')) o.coinbase = address(raw.coinbase, bad, 'coinbase');
  if (present('prevRandao')) o.prevRandao = fromHex(word(raw.prevRandao, bad, 'prevRandao'));
  if (present('baseFeePerGas')) o.baseFee = quantity(raw.baseFeePerGas, bad, 'baseFeePerGas');
  if (present('blobBaseFee')) o.blobBaseFee = quantity(raw.blobBaseFee, bad, 'blobBaseFee');
  if (present('difficulty')) quantity(raw.difficulty, bad, 'difficulty');
  return o;
}

/** The third and fourth parameters of eth_call / eth_estimateGas (geth's StateOverride, BlockOverrides). */
export function callOverrides(state: unknown, block: unknown): QueryOverrides {
  return {
    state: parseStateOverrides(state, 'invalid argument 2'),
    block: parseBlockOverrides(block, 'invalid argument 3'),
  };
}

/**
 * The fee fields and nonce of a call object into `args` (geth's TransactionArgs): quantities; both fee
 * styles at once are refused with geth's words.
 */
export function parseFeeFields(o: Record<string, unknown>, args: CallArgs, where = 'invalid argument 0'): void {
  const bad: Where = (what) => invalidParams(`${where}: ${what}`);
  const present = (k: string) => o[k] !== undefined && o[k] !== null;
  if (present('gasPrice')) args.gasPrice = quantity(o.gasPrice, bad, 'gasPrice');
  if (present('maxFeePerGas')) args.maxFeePerGas = quantity(o.maxFeePerGas, bad, 'maxFeePerGas');
  if (present('maxPriorityFeePerGas')) args.maxPriorityFeePerGas = quantity(o.maxPriorityFeePerGas, bad, 'maxPriorityFeePerGas');
  if (present('nonce')) args.nonce = quantity(o.nonce, bad, 'nonce', MAX_U64);
  if (present('chainId')) args.chainId = quantity(o.chainId, bad, 'chainId');
  const mixed = mixedFeesError(args);
  if (mixed) throw bad(mixed);
}

/** debug_traceCall's options carry geth's TraceCallConfig overrides: `stateOverrides`, `blockOverrides`. */
export function traceCallOverrides(options: unknown): QueryOverrides {
  if (!isObject(options)) return {};
  return {
    state: parseStateOverrides(options.stateOverrides, 'invalid argument 2: stateOverrides'),
    block: parseBlockOverrides(options.blockOverrides, 'invalid argument 2: blockOverrides'),
  };
}
