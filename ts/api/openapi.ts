/** The OpenAPI 3.1 document of the REST routes, built from the schemas each RouteDef declares. */
import { NODE_VERSION } from '../services/index.js';
import { type JsonSchema, obj, str } from './schema.js';
import { errorBody, rateLimitBody } from './schemas.js';
import type { RouteDef } from './types.js';

export const OPENAPI_VERSION = '3.1.0';

/** Parameter names of a find-my-way pattern; a trailing wildcard (/a/*, the rest of the path) is `path`. */
const pathParams = (path: string): string[] => [
  ...[...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]),
  ...(path.endsWith('*') ? ['path'] : []),
];
/** find-my-way pattern (/a/:b, /a/*) -> OpenAPI template (/a/{b}, /a/{path}). */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function operation(r: RouteDef): Record<string, unknown> {
  const names = pathParams(r.path);
  const parameters = [
    ...names.map((name) => ({ name, in: 'path', required: true, schema: r.params?.[name] ?? str() })),
    ...Object.entries(r.query ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      description: schema.description,
      schema,
    })),
  ];
  const responses: Record<string, unknown> = {
    200: r.response
      ? { description: 'OK', content: json(r.response) }
      : { description: 'OK', ...(r.produces ? { content: { [r.produces]: { schema: { type: 'string' } } } } : {}) },
  };
  if (names.length > 0 || r.query || r.body) {
    responses[400] = { description: 'invalid parameters or body', content: { 'application/json': { schema: ref('Error') } } };
  }
  if (r.auth) responses[401] = { description: 'X-API-Key missing or wrong (when the node has a key); empty body' };
  for (const [status, description] of Object.entries(r.statuses ?? {})) {
    responses[status] =
      status === '404'
        ? { description: `${description}; empty body` }
        : { description, content: json(ref('Error') as JsonSchema) };
  }
  responses[429] = { description: 'rate limit exceeded', content: { 'application/json': { schema: ref('RateLimited') } } };
  const op: Record<string, unknown> = {
    operationId: `${r.method.toLowerCase()}${r.path.replace(/\*$/, 'path').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')) || 'Root'}`,
    summary: r.summary ?? `${r.method} ${openApiPath(r.path)}`,
    tags: [r.tag ?? 'other'],
    parameters,
    responses,
  };
  if (r.description) op.description = r.description;
  if (r.body) op.requestBody = { required: true, content: json(r.body) };
  if (r.auth) op.security = [{ ApiKey: [] }, {}];
  return op;
}

/** OpenAPI document of routes (every method and path, with their declared schemas). */
export function openApiDocument(routes: readonly RouteDef[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = openApiPath(r.path);
    paths[p] ??= {};
    paths[p][r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Native node REST API',
      version: NODE_VERSION,
      description:
        'REST interface of the node. Amounts are integers in base units (1 coin = 1e8) unless the field ends in _native. ' +
        'Errors: 400 { success: false, error }, 401 and 404 with an empty body, 429 { error, limit, window_secs }.',
    },
    paths,
    components: {
      schemas: { Error: errorBody, RateLimited: rateLimitBody },
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
  };
}

/** GET /openapi.json over a route list that may still grow (the document is built on first request). */
export function openApiRoute(routes: readonly RouteDef[]): RouteDef {
  let doc: Record<string, unknown> | null = null;
  return {
    method: 'GET',
    path: '/openapi.json',
    tag: 'ops',
    summary: 'This OpenAPI document',
    response: obj({ openapi: str(), info: obj({ title: str(), version: str() }), paths: { type: 'object' } }),
    handler: () => {
      doc ??= openApiDocument(routes);
      return { body: doc };
    },
  };
}
