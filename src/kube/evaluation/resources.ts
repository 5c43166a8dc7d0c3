import type { GroupVersionKind, GroupVersionResource, KubeObject } from '../../admission/types.js';

/** Kinds whose resource name is not the lowercase plural the guess gives, and cluster-scoped kinds. */
const IRREGULAR: Record<string, string> = { Endpoints: 'endpoints', PodSecurityPolicy: 'podsecuritypolicies', NetworkPolicy: 'networkpolicies' };
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ClusterRole',
  'ClusterRoleBinding',
  'StorageClass',
  'CustomResourceDefinition',
  'PriorityClass',
  'RuntimeClass',
  'IngressClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'APIService',
  'CertificateSigningRequest',
]);

/** apimachinery's UnsafeGuessKindToResource: lowercase, then the English plural. */
export function resourceOfKind(kind: string): string {
  const irregular = IRREGULAR[kind];
  if (irregular) return irregular;
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y') && !/[aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

export function isClusterScoped(kind: string): boolean {
  return CLUSTER_SCOPED.has(kind);
}

export function groupVersionKindOf(object: KubeObject): GroupVersionKind {
  const apiVersion = object.apiVersion ?? 'v1';
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: object.kind ?? '',
  };
}

export function groupVersionResourceOf(object: KubeObject): GroupVersionResource {
  const { group, version, kind } = groupVersionKindOf(object);
  return { group, version, resource: resourceOfKind(kind) };
}
