import { parseJsonExact, stringifyExact } from '../util/json.js';

/** Minimal REST client for the wallet (exact integers both ways). */
export class NodeClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  async get<T>(path: string): Promise<{ status: number; body: T | null }> {
    const res = await fetch(`${this.baseUrl}${path}`);
    const text = await res.text();
    return { status: res.status, body: text ? (parseJsonExact(text) as T) : null };
  }

  async post<T>(path: string, body: unknown): Promise<{ status: number; body: T | null }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    const res = await fetch(`${this.baseUrl}${path}`, { method: 'POST', headers, body: stringifyExact(body) });
    const text = await res.text();
    return { status: res.status, body: text ? (parseJsonExact(text) as T) : null };
  }
}
