/**
 * Kubernetes minor versions as the CEL environments know them. kube-apiserver compiles an
 * expression that is written to the API (a webhook configuration's matchConditions) with the
 * environment of its compatibility version, one minor below its own binary
 * (k8s.io/apiserver/pkg/cel/environment: DefaultCompatibilityVersion, NewExpressions), and runs
 * stored expressions with everything its binary has (StoredExpressions).
 */

export interface KubernetesVersion {
  major: number;
  minor: number;
}

/** The newest Kubernetes release whose CEL library this server implements. */
export const CURRENT_KUBERNETES_RELEASE: KubernetesVersion = Object.freeze({ major: 1, minor: 36 });
/** The oldest environment built: what a 1.28 kube-apiserver (the first that honours matchConditions) compiles new expressions with. */
export const OLDEST_CEL_ENVIRONMENT: KubernetesVersion = Object.freeze({ major: 1, minor: 27 });

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

/** The environment kube-apiserver `version` compiles new expressions with: one minor behind, within what is built here. */
export function newExpressionsVersion(version: KubernetesVersion): KubernetesVersion {
  return clampToBuilt({ major: version.major, minor: version.minor - 1 });
}

/** The environment kube-apiserver `version` runs stored expressions with: its own, within what is built here. */
export function storedExpressionsVersion(version: KubernetesVersion): KubernetesVersion {
  return clampToBuilt(version);
}

function clampToBuilt(version: KubernetesVersion): KubernetesVersion {
  const minor = Math.min(Math.max(version.minor, OLDEST_CEL_ENVIRONMENT.minor), CURRENT_KUBERNETES_RELEASE.minor);
  return { major: 1, minor };
}
