import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** bench/RESULTS.md of this checkout. */
export const RESULTS_FILE = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));

/**
 * Replaces one section of RESULTS.md, from its `## ` heading up to the next `## ` heading, with `lines` (which
 * start with that heading); appends it when the file has no such section.
 */
export function writeResultsSection(heading: string, lines: string[]): void {
  const text = readFileSync(RESULTS_FILE, 'utf8');
  const start = text.indexOf(heading);
  const body = lines.join('\n');
  if (start === -1) {
    writeFileSync(RESULTS_FILE, `${text.trimEnd()}\n\n${body}`);
    return;
  }
  const next = text.indexOf('\n## ', start + heading.length);
  writeFileSync(RESULTS_FILE, `${text.slice(0, start)}${body}${next === -1 ? '' : `\n${text.slice(next + 1)}`}`);
}
