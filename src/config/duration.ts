const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)/;

/**
 * Parses a Go-style duration ("5s", "1m30s", "250ms", "2h") plus "d" for days; returns
 * milliseconds, or undefined when `text` is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  let rest = text.trim();
  if (rest === '') return undefined;
  if (rest === '0') return 0;
  let total = 0;
  while (rest.length > 0) {
    const match = DURATION.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2]!] ?? 0);
    rest = rest.slice(match[0].length);
  }
  return Math.round(total);
}

/** "5s", "1.5s", "250ms": for logs and --help. */
export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 0) return `${ms / 86_400_000}d`;
  if (ms >= 1000) return `${ms / 1000}s`;
  return `${ms}ms`;
}
