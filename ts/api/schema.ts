/**
 * JSON Schema (the subset OpenAPI 3.1 uses) declared once per route: the OpenAPI document is built from it
 * (ts/api/openapi.ts), request bodies are checked against it (`checkBody`), and tests check responses with it.
 * Integer bounds may be bigint: the document is serialized with exact integers.
 */
import { InvalidParamsError } from '../util/index.js';
import { jsonBody } from './params.js';

export type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

export interface JsonSchema {
  type?: JsonType | JsonType[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: readonly (string | number | boolean | null)[];
  const?: string | number | boolean;
  minimum?: number | bigint;
  maximum?: number | bigint;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  maxItems?: number;
  examples?: unknown[];
}

export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const HASH_PATTERN = '^[0-9a-f]{64}$';
export const CONTRACT_PATTERN = '^SRC20_[0-9a-fA-F]{40}$';
export const MAX_U64 = (1n << 64n) - 1n;

// Builders. Object properties are all required unless listed in `optional`; responses stay open to additions,
// request bodies are closed (`closed: true`: unknown fields are refused).
export const str = (description?: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
export const int = (description?: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  minimum: 0,
  description,
  ...extra,
});
export const num = (description?: string): JsonSchema => ({ type: 'number', description });
export const bool = (description?: string): JsonSchema => ({ type: 'boolean', description });
export const arr = (items: JsonSchema, description?: string): JsonSchema => ({ type: 'array', items, description });
export const address = (description = 'account address, 0x + 40 hex'): JsonSchema =>
  str(description, { pattern: ADDRESS_PATTERN });
export const hash = (description = '64 hex'): JsonSchema => str(description, { pattern: HASH_PATTERN });
export const amount = (description = 'base units (1 coin = 1e8)'): JsonSchema => int(description, { maximum: MAX_U64 });
export const literal = (value: string, description?: string): JsonSchema => ({ type: 'string', const: value, description });

export function nullable(s: JsonSchema): JsonSchema {
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return { ...s, type: [...types, 'null'] };
}

export function obj(
  properties: Record<string, JsonSchema>,
  opts: { optional?: string[]; closed?: boolean; description?: string } = {},
): JsonSchema {
  const optional = new Set(opts.optional ?? []);
  const s: JsonSchema = {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((k) => !optional.has(k)),
  };
  if (opts.closed) s.additionalProperties = false;
  if (opts.description) s.description = opts.description;
  return s;
}

const typeOf = (v: unknown): JsonType => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'integer' : 'number';
  return typeof v as JsonType;
};

const at = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** First violation of schema by value as a readable message (prefixed by the field path), or null. */
export function schemaError(value: unknown, s: JsonSchema, path = ''): string | null {
  const where = path || 'value';
  if (s.type !== undefined) {
    const allowed = Array.isArray(s.type) ? s.type : [s.type];
    const t = typeOf(value);
    const ok = allowed.includes(t) || (t === 'integer' && allowed.includes('number'));
    if (!ok)
      return `${where} must be ${allowed.map((a) => (a === 'null' ? 'null' : /^[aeiou]/.test(a) ? `an ${a}` : `a ${a}`)).join(' or ')}`;
  }
  if (s.const !== undefined && value !== s.const) return `${where} must be ${JSON.stringify(s.const)}`;
  if (s.enum && !s.enum.includes(value as string))
    return `${where} must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  if (typeof value === 'number' || typeof value === 'bigint') {
    const big = typeof value === 'bigint' || Number.isInteger(value);
    const cmp = (bound: number | bigint): number => {
      if (!big || (typeof bound === 'number' && !Number.isInteger(bound))) return Number(value) - Number(bound);
      const d = BigInt(value) - BigInt(bound);
      return d < 0n ? -1 : d > 0n ? 1 : 0;
    };
    if (s.minimum !== undefined && cmp(s.minimum) < 0) return `${where} must be >= ${s.minimum}`;
    if (s.maximum !== undefined && cmp(s.maximum) > 0) return `${where} must be <= ${s.maximum}`;
  }
  if (typeof value === 'string') {
    if (s.minLength !== undefined && value.length < s.minLength) return `${where} must have at least ${s.minLength} characters`;
    if (s.maxLength !== undefined && value.length > s.maxLength) return `${where} must have at most ${s.maxLength} characters`;
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(value))
      return `${where} has an invalid format (${s.description ?? s.pattern})`;
  }
  if (Array.isArray(value)) {
    if (s.maxItems !== undefined && value.length > s.maxItems) return `${where} must have at most ${s.maxItems} items`;
    if (s.items) {
      for (let i = 0; i < value.length; i++) {
        const e = schemaError(value[i], s.items, `${where}[${i}]`);
        if (e) return e;
      }
    }
  }
  if (typeOf(value) === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of s.required ?? []) if (!(k in o)) return `missing field ${at(path, k)}`;
    for (const [k, v] of Object.entries(o)) {
      const sub = s.properties?.[k];
      if (sub) {
        const e = schemaError(v, sub, at(path, k));
        if (e) return e;
      } else if (s.additionalProperties === false) return `unknown field ${at(path, k)}`;
    }
  }
  return null;
}

/** The request body parsed as exact JSON and checked against schema; InvalidParamsError (400) otherwise. */
export function checkBody<T = Record<string, unknown>>(body: Buffer, schema: JsonSchema): T {
  const v = jsonBody(body);
  const err = schemaError(v, schema);
  if (err) throw new InvalidParamsError(err);
  return v as T;
}
