/**
 * What the verification routes share: their result and table types (independent of the node's REST layer,
 * so the standalone service serves the same table), JSON bodies, and the one place errors become answers.
 */
import { randomUUID } from 'node:crypto';
import type { HttpRequest } from '../http/index.js';
import { InvalidVerifyRequestError, VerifyError } from './errors.js';
import type { V2Error } from './jobs.js';
import type { VerificationService } from './service.js';

/** An answer: JSON `body`, or `raw` text with its headers. */
export interface VerifyResult {
  status?: number;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

export interface VerifyRoute {
  method: 'GET' | 'POST';
  /** find-my-way pattern. */
  path: string;
  summary: string;
  handler: (
    svc: VerificationService,
    req: HttpRequest,
    params: Record<string, string>,
    hooks: VerifyHooks,
  ) => Promise<VerifyResult>;
}

/**
 * What the server serving the routes is told (the standalone service and the node log it): given to each
 * handler by the server, so two servers in one process (tests) report to their own logs.
 */
export interface VerifyHooks {
  /** An error the routes did not expect, with where it happened. */
  onError?: (err: unknown, where: string) => void;
}

/** The request body as a JSON object (400 otherwise). */
export function jsonObject(req: HttpRequest): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(req.body.toString('utf8'));
  } catch (err) {
    throw new InvalidVerifyRequestError(`invalid JSON body: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new InvalidVerifyRequestError('the body must be a JSON object');
  return v as Record<string, unknown>;
}

/** API v1's error answer: `{ error, ...details }` with the error's status. */
export function v1Error(err: unknown, req: HttpRequest, hooks: VerifyHooks): VerifyResult {
  if (err instanceof VerifyError) return { status: err.httpStatus, body: { error: err.message, ...err.details } };
  hooks.onError?.(err, `${req.method} ${req.path}`);
  return { status: 500, body: { error: 'internal error' } };
}

/** API v2's error object: `{ customCode, message, errorId }` (also a failed job's `error`). */
export function v2ErrorBody(err: unknown, where: string, hooks: VerifyHooks): V2Error {
  if (err instanceof VerifyError) return { customCode: err.code, message: err.message, errorId: randomUUID() };
  hooks.onError?.(err, where);
  return { customCode: 'internal_error', message: 'internal error', errorId: randomUUID() };
}

/** API v2's error answer. */
export function v2Error(err: unknown, req: HttpRequest, hooks: VerifyHooks): VerifyResult {
  return {
    status: err instanceof VerifyError ? err.httpStatus : 500,
    body: v2ErrorBody(err, `${req.method} ${req.path}`, hooks),
  };
}

/** A handler whose failures answer in API v1's shape. */
export const v1 =
  (fn: VerifyRoute['handler']): VerifyRoute['handler'] =>
  (svc, req, params, hooks) =>
    fn(svc, req, params, hooks).catch((err: unknown) => v1Error(err, req, hooks));

/** A handler whose failures answer in API v2's shape. */
export const v2 =
  (fn: VerifyRoute['handler']): VerifyRoute['handler'] =>
  (svc, req, params, hooks) =>
    fn(svc, req, params, hooks).catch((err: unknown) => v2Error(err, req, hooks));
