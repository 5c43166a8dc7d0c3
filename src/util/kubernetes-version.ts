/** Kubernetes versions as users write them (`1.30`, `v1.30.2`, `1.30+`): the flag, the policy floor and the CEL environments read them alike. */

export interface KubernetesVersion {
  major: number;
  minor: number;
}

/** The newest Kubernetes release whose CEL library this server implements (src/cel/library). */
export const CURRENT_KUBERNETES_RELEASE: KubernetesVersion = Object.freeze({ major: 1, minor: 36 });

export const KUBERNETES_VERSION_HINT = 'a Kubernetes version such as 1.30 or v1.30.2';

/** "1.30", "v1.30.2", "1.30+" (as EKS and GKE report minors); undefined when it is no 1.x version. */
export function parseKubernetesVersion(text: string): KubernetesVersion | undefined {
  const match = /^v?(\d+)\.(\d+)\+?(?:\.\d+)?(?:[-+].*)?$/.exec(text.trim());
  if (!match) return undefined;
  const version = { major: Number(match[1]), minor: Number(match[2]) };
  return version.major === 1 ? version : undefined;
}

export function formatKubernetesVersion(version: KubernetesVersion): string {
  return `${version.major}.${version.minor}`;
}
