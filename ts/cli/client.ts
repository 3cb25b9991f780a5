import { parseJsonExact, stringifyExact } from '../util/index.js';

/** Why a request never got an answer, in words (the socket error codes fetch hides in `cause`). */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
};

/** The node could not be reached at all (as opposed to an answer with an error status). */
export class NodeUnreachableError extends Error {
  readonly code = 'UNREACHABLE';
  constructor(url: string, cause: string) {
    super(`cannot reach ${url}: ${cause} — is the node running?`);
    this.name = 'NodeUnreachableError';
  }
}

export interface Reply<T> {
  status: number;
  body: T | null;
}

/** Minimal HTTP client for the wallet (exact integers both ways). */
export class NodeClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  private async request<T>(path: string, init?: RequestInit): Promise<Reply<T>> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, init);
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new NodeUnreachableError(this.baseUrl, CAUSES[cause?.code ?? ''] ?? cause?.message ?? (err as Error).message);
    }
    const text = await res.text();
    let body: T | null = null;
    try {
      body = text ? (parseJsonExact(text) as T) : null;
    } catch {
      body = null; // not JSON: not a node of ours, or a proxy's error page; the status tells
    }
    return { status: res.status, body };
  }

  get<T>(path: string): Promise<Reply<T>> {
    return this.request<T>(path);
  }

  post<T>(path: string, body: unknown): Promise<Reply<T>> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    return this.request<T>(path, { method: 'POST', headers, body: stringifyExact(body) });
  }

  /** One JSON-RPC call (EVM receipts are not part of the REST interface). */
  async rpc<T>(method: string, params: unknown[]): Promise<T | null> {
    const r = await this.post<{ result?: T }>('/rpc', { jsonrpc: '2.0', id: 1, method, params });
    return r.body?.result ?? null;
  }
}
