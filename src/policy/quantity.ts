/** Kubernetes resource quantities ("100m", "128Mi", "1.5", "2e3"), enough to compare them. */

const QUANTITY = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?$/;

const SUFFIX_FACTOR: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a non-negative quantity, or undefined when it is not one. */
export function parseQuantity(text: string): number | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (/^[eE]/.test(suffix)) return number * 10 ** Number(suffix.slice(1));
  const factor = SUFFIX_FACTOR[suffix];
  return factor === undefined ? undefined : number * factor;
}

export const QUANTITY_HINT = 'a non-negative Kubernetes quantity such as "100m", "0.5", "128Mi" or "1Gi"';
