/**
 * Kubernetes minor versions as the CEL environments know them. kube-apiserver compiles an
 * expression that is written to the API (a webhook configuration's matchConditions) with the
 * environment of its compatibility version, one minor below its own binary
 * (k8s.io/apiserver/pkg/cel/environment: DefaultCompatibilityVersion, NewExpressions), and runs
 * stored expressions with everything its binary has (StoredExpressions).
 */

import { CURRENT_KUBERNETES_RELEASE, type KubernetesVersion } from '../util/kubernetes-version.js';

export {
  CURRENT_KUBERNETES_RELEASE,
  formatKubernetesVersion,
  KUBERNETES_VERSION_HINT,
  parseKubernetesVersion,
  type KubernetesVersion,
} from '../util/kubernetes-version.js';
/** The oldest environment built: what a 1.28 kube-apiserver (the first that honours matchConditions) compiles new expressions with. */
export const OLDEST_CEL_ENVIRONMENT: KubernetesVersion = Object.freeze({ major: 1, minor: 27 });

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
