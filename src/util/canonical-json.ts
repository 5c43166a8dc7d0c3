/**
 * JSON with sorted keys and no undefined values or empty lists, so that equal content compares
 * equal however it was written (`{}` and an absent selector, `[]` and no matchConditions).
 */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, canonical(v)]);
    return Object.fromEntries(entries);
  }
  return value;
}

/** The canonical form as a string: a map key, a digest's input. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value)) ?? 'null';
}
