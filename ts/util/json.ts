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

/** JSON.stringify that writes bigint as a bare JSON integer (exact), not a string. */
export function stringifyExact(value: unknown): string {
  // Fast path: most answers (all JSON-RPC results are hex strings) hold no bigint; JSON.stringify
  // throws a TypeError on the first bigint it meets, and only then is the replacer walk needed.
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') {
      marks.push(v.toString());
      return `\u0000BIG${marks.length - 1}\u0000`;
    }
    return v;
  });
  if (marks.length === 0) return text;
  return text.replace(/"\\u0000BIG(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]);
}

/** Integer-valued JSON field as bigint, or undefined when it is not an exact non-negative integer. */
export function asUint(v: unknown, max: bigint = (1n << 64n) - 1n): bigint | undefined {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else return undefined;
  return n >= 0n && n <= max ? n : undefined;
}
