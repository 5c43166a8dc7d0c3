/** Go's time.Duration text (what kube-apiserver puts in `?timeout=`), e.g. `10s`, `1m30s`, `1.5s`. */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const WHOLE = /^(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** Milliseconds for a positive Go duration string; undefined when it is not one (signs are refused: a timeout is never negative). */
export function parseGoDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  }
  return Number.isFinite(total) ? total : undefined;
}
