/**
 * The node's logger: pino, JSON lines for machines or one readable line per event for people. The pretty
 * form is a small formatter here rather than pino-pretty (not a dependency of this project; the format is a
 * few lines and has no options to learn). Numbers are rounded in both forms: timings are measured in
 * fractional milliseconds and 12.345678901 says nothing 12.35 does not.
 */
import { pino, type Logger } from 'pino';
import type { LogFormat } from './config.js';

/** Decimals kept for fractional numbers in log lines. */
export const LOG_DECIMALS = 2;

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Fields every line has; the pretty form shows them in its fixed columns instead. */
const FIXED = new Set(['level', 'time', 'msg', 'node', 'pid', 'hostname']);

/** Fractional numbers rounded to LOG_DECIMALS, recursively in plain objects and arrays. */
export function roundNumbers<T>(value: T): T {
  if (typeof value === 'number') {
    if (Number.isInteger(value) || !Number.isFinite(value)) return value;
    const f = 10 ** LOG_DECIMALS;
    return (Math.round(value * f) / f) as T;
  }
  if (Array.isArray(value)) return value.map(roundNumbers) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = roundNumbers(v);
    return out as T;
  }
  return value;
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

/** One JSON log line as `HH:MM:SS.mmm LEVEL message key=value ...` (an error's stack on the lines below). */
export function prettyLine(json: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof o.level === 'number' ? o.level : 30;
  const name = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const time = typeof o.time === 'number' ? new Date(o.time).toISOString().slice(11, 23) : '';
  const tag = color ? `\x1b[${LEVEL_COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  const fields: string[] = [];
  let stack = '';
  for (const [k, v] of Object.entries(o)) {
    if (FIXED.has(k)) continue;
    if (k === 'err' && v !== null && typeof v === 'object') {
      const e = v as { message?: string; stack?: string };
      fields.push(`err=${fieldText(e.message ?? '')}`);
      if (e.stack && level >= 50) stack = `\n    ${e.stack.split('\n').slice(1).join('\n    ').trim()}`;
      continue;
    }
    fields.push(`${k}=${fieldText(v)}`);
  }
  const msg = typeof o.msg === 'string' ? o.msg : '';
  return `${time} ${tag} ${msg}${fields.length ? ` ${fields.join(' ')}` : ''}${stack}\n`;
}

/** A pino destination that writes each line through prettyLine. */
export function prettyStream(out: NodeJS.WritableStream & { isTTY?: boolean }): { write(line: string): void } {
  const color = out.isTTY === true;
  return { write: (line: string) => out.write(prettyLine(line, color)) };
}

/** Pretty on a terminal, JSON when the output goes to a file, a pipe or a log collector. */
export function defaultLogFormat(out: { isTTY?: boolean }): LogFormat {
  return out.isTTY ? 'pretty' : 'json';
}

export function createLogger(opts: { level: string; nodeName: string; format?: LogFormat }): Logger {
  const format = opts.format ?? defaultLogFormat(process.stdout);
  const options = { level: opts.level, base: { node: opts.nodeName }, formatters: { log: roundNumbers } };
  return format === 'pretty' ? pino(options, prettyStream(process.stdout)) : pino(options);
}
