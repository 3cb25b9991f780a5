import { Counter, type Registry } from 'prom-client';

/**
 * Per-key request counts (`--api-keys`), labelled by the key's label from the keys file, never the key
 * itself: native_api_key_requests_total{key}, native_api_key_weight_total{key},
 * native_api_key_refused_total{key,reason}. Labels come from the operator's file (bounded by it).
 */
export class ApiKeyMetrics {
  private readonly requests: Counter<'key'>;
  private readonly weight: Counter<'key'>;
  private readonly refused: Counter<'key' | 'reason'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'native_api_key_requests_total',
      help: 'Requests admitted per API key label (a JSON-RPC batch counts once)',
      labelNames: ['key'],
      registers: [registry],
    });
    this.weight = new Counter({
      name: 'native_api_key_weight_total',
      help: 'Weight units charged per API key label',
      labelNames: ['key'],
      registers: [registry],
    });
    this.refused = new Counter({
      name: 'native_api_key_refused_total',
      help: 'Requests or JSON-RPC calls refused per API key label: rate (429), denied (403 / -32601), unknown_key (401)',
      labelNames: ['key', 'reason'],
      registers: [registry],
    });
  }

  admitted(label: string, weight: number): void {
    this.requests.inc({ key: label });
    if (weight > 0) this.weight.inc({ key: label }, weight);
  }

  refusedBy(label: string, reason: string): void {
    this.refused.inc({ key: label, reason });
  }
}
