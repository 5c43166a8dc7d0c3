/**
 * Go's time.Duration text (`10s`, `1m30s`, `1.5s`, `250ms`, `1500us`), plus `d` for days: the
 * format of duration flags and of kube-apiserver's `?timeout=`. One parser serves both.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const WHOLE = /^(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h|d))+$/;
const PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/g;

/** Milliseconds (not rounded) for a duration; undefined when `text` is not one. Signs are refused. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * (UNIT_MS[unit as string] as number);
  return Number.isFinite(total) ? total : undefined;
}
