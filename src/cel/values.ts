/**
 * JSON -> CEL values. Kubernetes' CEL sees integer fields (replicas, ports) as `int`; the
 * library maps JavaScript numbers to `double` and bigints to `int`, so integers are converted on
 * the way in, copying only the branches that hold one.
 */

/** `value` with every integral number turned into a bigint; shares every branch that has none. */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return convertList(value);
  return convertMap(value as Record<string, unknown>);
}

const converted = new WeakMap<object, unknown>();

/**
 * toCel for a request's object, converted once however many rules read it: evaluate and audit
 * hand the same object to every rule of the policy (the server parses each review anew, so
 * there it is one conversion either way). The CEL values are never modified.
 */
export function toCelShared(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return toCel(value);
  let result = converted.get(value);
  if (result === undefined) converted.set(value, (result = toCel(value)));
  return result;
}

function convertList(list: readonly unknown[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const converted = toCel(item);
    if (converted !== item) (copy ??= list.slice())[i] = converted;
  }
  return copy ?? (list as unknown[]);
}

function convertMap(map: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in map) {
    const item = map[key];
    const converted = toCel(item);
    if (converted !== item) (copy ??= { ...map })[key] = converted;
  }
  return copy ?? map;
}
