import { isInteger, parse } from 'lossless-json';

/**
 * A number token of 16+ digits: a JSON number starts the text or follows `:`, `,` or `[` (whitespace and a
 * minus sign between). A run of digits inside a string (hex signatures and keys hold many) does not match,
 * unless the string itself contains such a sequence: then the exact parser runs, still correctly.
 */
const LONG_NUMBER = /(?:^|[:,[])\s*-?\d{16}/;

/**
 * Parse JSON keeping integers exact: integers beyond 2^53 become bigint, others stay numbers.
 * The fast path (JSON.parse) is taken when no number token of 16+ digits appears, since every integer
 * of at most 15 digits is exact in a double.
 */
export function parseJsonExact(text: string): unknown {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  return parse(text, null, (value: string) => {
    if (isInteger(value)) {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : BigInt(value);
    }
    return Number(value);
  });
}

/** Texts of the RawJson values met by the JSON.stringify call in progress (synchronous, so one list suffices). */
let rawTexts: string[] = [];

/**
 * Already serialized JSON that stringifyExact inserts verbatim: a trace's struct logs are produced as
 * text while the EVM runs (counted against the output cap), not as objects serialized again at the end.
 */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    rawTexts.push(this.text);
    return `\u0000RAW${rawTexts.length - 1}\u0000`;
  }
}

function insertRaw(text: string): string {
  if (rawTexts.length === 0) return text;
  const texts = rawTexts;
  rawTexts = [];
  return text.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_m, i: string) => texts[Number(i)]);
}

/** Whether a plain object holds a bigint among its own top-level values (REST answers: `balance`, `amount`). */
function bigintAtTop(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  for (const k in o) if (typeof o[k] === 'bigint') return true;
  return false;
}

/**
 * JSON.stringify without a bigint-aware replacer; throws a TypeError at the first bigint. The error's stack
 * trace is not captured (it is dropped at once, and capturing it cost ~3 µs, two thirds of a small REST
 * answer); an error of any other kind is raised again with its stack.
 */
function stringifyPlain(value: unknown): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof TypeError) return undefined;
    Error.stackTraceLimit = limit;
    JSON.stringify(value);
    throw err;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** JSON.stringify that writes bigint as a bare JSON integer (exact), not a string, and RawJson verbatim. */
export function stringifyExact(value: unknown): string {
  rawTexts = [];
  // Fast path: most answers (all JSON-RPC results are hex strings) hold no bigint; JSON.stringify
  // throws a TypeError on the first bigint it meets, and only then is the replacer walk needed. A bigint
  // in sight at the top goes to the replacer walk at once.
  if (!bigintAtTop(value)) {
    const text = stringifyPlain(value);
    if (text !== undefined) return insertRaw(text);
  }
  rawTexts = [];
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') {
      marks.push(v.toString());
      return `\u0000BIG${marks.length - 1}\u0000`;
    }
    return v;
  });
  const exact = marks.length === 0 ? text : text.replace(/"\\u0000BIG(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]);
  return insertRaw(exact);
}

/** Integer-valued JSON field as bigint, or undefined when it is not an exact non-negative integer. */
export function asUint(v: unknown, max: bigint = (1n << 64n) - 1n): bigint | undefined {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else return undefined;
  return n >= 0n && n <= max ? n : undefined;
}
