/** apimachinery's CompareKubeAwareVersionStrings: GA before beta before alpha, then the higher major, then the higher minor. */

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY: Readonly<Record<string, number>> = { alpha: 0, beta: 1, ga: 2 };

function parse(version: string): [number, number, number] | undefined {
  const m = KUBE_VERSION.exec(version);
  if (!m) return undefined;
  return [Number(m[1]), STABILITY[m[2] ?? 'ga'] ?? 2, Number(m[3] ?? 0)];
}

/** Positive when `a` has the higher priority; versions that are not Kubernetes-like come last, alphabetically. */
export function compareKubeAwareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const pa = parse(a);
  const pb = parse(b);
  if (!pa && !pb) return a < b ? 1 : -1;
  if (!pa) return -1;
  if (!pb) return 1;
  return pa[1] - pb[1] || pa[0] - pb[0] || pa[2] - pb[2];
}

/** Highest priority first: the order discovery lists a group's versions in, the preferred one first. */
export const byKubeAwarePriority = (a: string, b: string): number => compareKubeAwareVersions(b, a);
