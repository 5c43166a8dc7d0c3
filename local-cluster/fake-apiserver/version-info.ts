/** What the double claims to be when not told otherwise. */
export const DEFAULT_VERSION = 'v1.35.2';

/**
 * GET /version as kube-apiserver answers it: `minor` as managed offerings report it ("27+" on EKS
 * and GKE builds). Every client may read it, authenticated or not (system:public-info-viewer),
 * so RBAC is not consulted.
 */
export function versionInfo(gitVersion: string): Record<string, string> {
  const match = /^v(\d+)\.(\d+)\.\d+(.*)$/.exec(gitVersion);
  if (!match) throw new Error(`fake apiserver: "${gitVersion}" is not a version like v1.35.2`);
  const [, major, minor, suffix] = match;
  return { major: major!, minor: `${minor}${suffix ? '+' : ''}`, gitVersion, gitCommit: '0'.repeat(40), gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'go1.25.0', compiler: 'gc', platform: 'linux/amd64' };
}
