/**
 * Counters and histograms for the per-request hot path (HTTP requests, JSON-RPC calls): plain
 * accumulators per label set, rendered in the Prometheus text format at scrape time. prom-client
 * validates and hashes labels on every call, which measured ~20% of a small request's CPU.
 */

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i])}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

const num = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

/** One label set of a histogram; callers may keep it and pass it to observeIn. */
export interface HistogramState {
  values: string[];
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** One label set of a counter; callers may keep it and bump `n`. */
export interface CounterState {
  values: string[];
  n: number;
}

export class HotHistogram {
  private readonly series = new Map<string, HistogramState>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {}

  /** key must identify the label values (callers build it once per distinct label set). */
  observe(key: string, values: readonly string[], v: number): void {
    this.observeIn(this.state(key, values), v);
  }

  /** The series of a label set, created on first use: the hot path keeps it instead of a key. */
  state(key: string, values: readonly string[]): HistogramState {
    let s = this.series.get(key);
    if (s === undefined) {
      s = { values: [...values], buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  observeIn(s: HistogramState, v: number): void {
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]) {
        s.buckets[i]++;
        break;
      }
    }
    s.sum += v;
    s.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      let cum = 0;
      this.bounds.forEach((le, i) => {
        cum += s.buckets[i];
        lines.push(`${this.name}_bucket${labelText(this.labelNames, s.values, `le="${le}"`)} ${cum}`);
      });
      lines.push(`${this.name}_bucket${labelText(this.labelNames, s.values, 'le="+Inf"')} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(this.labelNames, s.values)} ${num(s.sum)}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, s.values)} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

export class HotCounter {
  private readonly series = new Map<string, CounterState>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  inc(key: string, values: readonly string[], by = 1): void {
    this.state(key, values).n += by;
  }

  /** The series of a label set, created at 0 on first use: the hot path keeps it instead of a key. */
  state(key: string, values: readonly string[]): CounterState {
    let s = this.series.get(key);
    if (!s) {
      s = { values: [...values], n: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const s of this.series.values()) lines.push(`${this.name}${labelText(this.labelNames, s.values)} ${s.n}`);
    return `${lines.join('\n')}\n`;
  }
}
