/**
 * The JSON of a native operation as the decoder needs it. Almost every operation a node sees is the
 * compact form clients produce (`{"Transfer":{"contract":"SRC20_…","to":"0x…","amount":5}}`): an object
 * with one key whose value is a flat object of strings, integers, booleans and nulls. That form is read
 * here by one scan of the text; anything else (whitespace, escapes, nesting, fractions, exponents, signs,
 * leading zeros, a repeated key, `__proto__`) is left to lossless-json, whose result for the compact form
 * is the same (a test checks both on every variant), so the operation still has exactly one meaning and
 * every error keeps its message.
 */
import { isInteger, parse } from 'lossless-json';

/**
 * Strict JSON: duplicate keys throw (lossless-json), every number stays its exact text. Integers
 * become bigint; anything else that looks numeric is refused by the field checks.
 */
export function parseStrictJson(text: string): unknown {
  return parseCompactOperation(text) ?? parseWithLosslessJson(text);
}

export const parseWithLosslessJson = (text: string): unknown =>
  parse(text, null, (value: string) => (isInteger(value) ? BigInt(value) : { fraction: value }));

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

/** The compact one-level form, or undefined when the text is anything else (the full parser decides). */
export function parseCompactOperation(text: string): Record<string, Record<string, unknown>> | undefined {
  const n = text.length;
  if (n < 7 || text.charCodeAt(0) !== OPEN || text.charCodeAt(n - 1) !== CLOSE || text.charCodeAt(n - 2) !== CLOSE) return;
  let i = 1;
  // A string without escapes or control characters, starting at the quote at i; returns its end (after the quote).
  const str = (): number => {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    for (let j = i + 1; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) return j + 1;
      if (c === BACKSLASH || c < 0x20) return -1;
    }
    return -1;
  };
  let end = str();
  if (end < 0 || text.charCodeAt(end) !== COLON || text.charCodeAt(end + 1) !== OPEN) return;
  const name = text.slice(i + 1, end - 1);
  if (name === '__proto__') return;
  i = end + 2;
  const body: Record<string, unknown> = {};
  if (text.charCodeAt(i) === CLOSE) return i === n - 2 ? { [name]: body } : undefined;
  for (;;) {
    end = str();
    if (end < 0 || text.charCodeAt(end) !== COLON) return;
    const key = text.slice(i + 1, end - 1);
    if (key === '__proto__' || Object.hasOwn(body, key)) return;
    i = end + 1;
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      end = str();
      if (end < 0) return;
      body[key] = text.slice(i + 1, end - 1);
      i = end;
    } else if (c >= 0x30 && c <= 0x39) {
      let j = i + 1;
      while (j < n && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j++;
      if (c === 0x30 && j > i + 1) return; // a leading zero: not JSON
      body[key] = BigInt(text.slice(i, j));
      i = j;
    } else if (text.startsWith('null', i)) {
      body[key] = null;
      i += 4;
    } else if (text.startsWith('true', i)) {
      body[key] = true;
      i += 4;
    } else if (text.startsWith('false', i)) {
      body[key] = false;
      i += 5;
    } else return;
    const sep = text.charCodeAt(i);
    if (sep === COMMA) {
      i++;
      continue;
    }
    return sep === CLOSE && i === n - 2 ? { [name]: body } : undefined;
  }
}
