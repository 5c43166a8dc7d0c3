import type { Operation, UserInfo } from '../../admission/types.js';

export { OPERATIONS, operationProblem, principalProblem, subresourceProblem } from '../../config/request-values.js';

/**
 * How the request for each object is made, beyond the object itself: what `evaluate` takes as
 * flags and a test file as its `request` field (one set of checks serves both).
 */
export interface RequestShape {
  /** Unset: CREATE, or UPDATE when the object has a stored version. */
  operation?: Operation;
  dryRun: boolean;
  userInfo: UserInfo;
  subResource?: string;
}

/** kubectl's cluster-admin from a kind or kubeadm kubeconfig: what a person applying manifests usually is. */
export const DEFAULT_USER: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

export const DEFAULT_SHAPE: Readonly<RequestShape> = Object.freeze({ dryRun: false, userInfo: DEFAULT_USER });

/**
 * Subresources whose request carries the parent's own kind, and the only operation kube-apiserver
 * sends for each (their REST storage implements update and patch, and a patch is an UPDATE).
 */
const SAME_KIND_SUBRESOURCES: Readonly<Record<string, Operation>> = { status: 'UPDATE', ephemeralcontainers: 'UPDATE', resize: 'UPDATE' };

/** CONNECT subresources, per resource, and the kind of the options object kube-apiserver sends as `object`. */
const CONNECT_OPTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  pods: { exec: 'PodExecOptions', attach: 'PodAttachOptions', portforward: 'PodPortForwardOptions', proxy: 'PodProxyOptions' },
  services: { proxy: 'ServiceProxyOptions' },
  nodes: { proxy: 'NodeProxyOptions' },
};

/**
 * The user kube-apiserver's authenticators would report: every authenticated user is also in
 * `system:authenticated`. Without a user, kubectl's usual admin.
 */
export function userInfoOf(username: string | undefined, groups: readonly string[]): UserInfo {
  if (username === undefined && groups.length === 0) return DEFAULT_USER;
  const all = [...new Set([...groups, 'system:authenticated'])];
  return { username: username ?? DEFAULT_USER.username!, groups: all };
}

/** The options kind of a CONNECT to `resource`/`subResource`, or undefined when there is no such CONNECT. */
export function connectOptionsKind(resource: string, subResource: string | undefined): string | undefined {
  return subResource === undefined ? undefined : CONNECT_OPTIONS[resource]?.[subResource];
}

/**
 * Whether `operation` on `resource`/`subResource` is a request kube-apiserver can receive (and
 * evaluate can build); the problem in words otherwise.
 */
export function shapeProblem(operation: Operation, resource: string, subResource: string | undefined): string | undefined {
  const connectKind = connectOptionsKind(resource, subResource);
  if (operation === 'CONNECT') {
    if (connectKind) return undefined;
    const known = Object.entries(CONNECT_OPTIONS).flatMap(([r, subs]) => Object.keys(subs).map((s) => `${r}/${s}`));
    return `CONNECT goes to a connect subresource (${known.join(', ')}); ${resource}${subResource ? `/${subResource}` : ''} is none`;
  }
  if (subResource === undefined) return undefined;
  if (connectKind) return `${resource}/${subResource} takes only CONNECT, not ${operation}`;
  const only = SAME_KIND_SUBRESOURCES[subResource];
  if (!only) {
    return `subresource "${subResource}" is not supported: evaluate builds ${Object.keys(SAME_KIND_SUBRESOURCES).join(', ')} (the object's own kind) and the CONNECT subresources; others (scale, eviction, binding) carry another kind`;
  }
  return only === operation ? undefined : `${resource}/${subResource} takes only ${only}, not ${operation}`;
}
