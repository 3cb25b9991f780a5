/**
 * Chart geometry computed on the server; templates draw it as inline SVG (no script, no chart library in
 * the browser). Labels are plain strings that the template escapes like any other value.
 */
import { int, percent } from './format.js';

export interface Bar {
  x: number;
  y: number;
  w: number;
  h: number;
  /** Hover text (SVG <title>). */
  title: string;
}

export interface AxisLabel {
  x: number;
  y: number;
  text: string;
}

export interface BarChart {
  /** Accessible name of the chart (aria-label and the figure caption). */
  caption: string;
  width: number;
  height: number;
  bars: Bar[];
  labels: AxisLabel[];
  /** Top of the value axis, e.g. "1,200". */
  max: AxisLabel;
  baseline: number;
  empty: boolean;
}

const W = 640;
const H = 180;
const PAD_LEFT = 56;
const PAD_BOTTOM = 22;
const PAD_TOP = 10;
/** At most this many x labels, spread evenly, so they never overlap. */
const MAX_X_LABELS = 8;
/** Widest slot of one bar (view box units). */
const MAX_SLOT = 48;

/** Vertical bars of `points` (oldest first), scaled to the largest value. */
export function barChart(caption: string, points: { label: string; value: number; title?: string }[]): BarChart {
  const max = Math.max(0, ...points.map((p) => p.value));
  const plotW = W - PAD_LEFT - 4;
  const plotH = H - PAD_TOP - PAD_BOTTOM;
  // A few points get slim bars from the left, not bars as wide as the chart.
  const slot = Math.min(MAX_SLOT, points.length > 0 ? plotW / points.length : plotW);
  const gap = Math.min(4, slot * 0.2);
  const baseline = H - PAD_BOTTOM;
  const bars = points.map((p, i) => {
    const h = max > 0 ? Math.max(p.value > 0 ? 1 : 0, (p.value / max) * plotH) : 0;
    return {
      x: round(PAD_LEFT + i * slot + gap / 2),
      y: round(baseline - h),
      w: round(Math.max(1, slot - gap)),
      h: round(h),
      title: p.title ?? `${p.label}: ${int(p.value)}`,
    };
  });
  const step = Math.max(1, Math.ceil(points.length / MAX_X_LABELS));
  const labels = points
    .map((p, i) => ({ x: round(PAD_LEFT + i * slot + slot / 2), y: H - 6, text: p.label, i }))
    // Every step-th label and the last one, unless the last would touch its left neighbour.
    .filter((l) => (l.i % step === 0 && points.length - 1 - l.i >= step / 2 + 0.5) || l.i === points.length - 1)
    .map(({ x, y, text }) => ({ x, y, text }));
  return {
    caption,
    width: W,
    height: H,
    bars,
    labels,
    max: { x: PAD_LEFT - 6, y: PAD_TOP + 10, text: int(max) },
    baseline,
    empty: max === 0,
  };
}

export interface ShareSegment {
  x: number;
  w: number;
  fill: string;
  label: string;
  share: string;
  title: string;
}

export interface ShareChart {
  caption: string;
  width: number;
  height: number;
  segments: ShareSegment[];
  empty: boolean;
}

/** Fixed palette (SVG fill attributes, not inline styles: the CSP allows no inline style). */
const PALETTE = ['#2f6fdf', '#e07b39', '#3aa870', '#c94f6d', '#8a63d2', '#2fb3c0', '#b89b2a', '#6d7f99', '#d45fb4', '#5c9e31'];
const REST_FILL = '#c8ced8';

/**
 * One horizontal bar split by share (e.g. a token's holders: the largest ones and "everyone else").
 * `parts` are percentages (0..100) of the whole; what they leave is the rest.
 */
export function shareChart(caption: string, parts: { label: string; pct: number }[], restLabel = 'others'): ShareChart {
  const width = W;
  const segments: ShareSegment[] = [];
  let x = 0;
  let used = 0;
  parts.forEach((p, i) => {
    const pct = Math.max(0, Math.min(100 - used, p.pct));
    used += pct;
    const w = (pct / 100) * width;
    segments.push({
      x: round(x),
      w: round(w),
      fill: PALETTE[i % PALETTE.length],
      label: p.label,
      share: percent(pct),
      title: `${p.label}: ${percent(pct)}`,
    });
    x += w;
  });
  const rest = Math.max(0, 100 - used);
  if (rest > 0.0001 && parts.length > 0) {
    segments.push({
      x: round(x),
      w: round(width - x),
      fill: REST_FILL,
      label: restLabel,
      share: percent(rest),
      title: `${restLabel}: ${percent(rest)}`,
    });
  }
  return { caption, width, height: 28, segments, empty: parts.length === 0 };
}

const round = (n: number): number => Math.round(n * 10) / 10;
