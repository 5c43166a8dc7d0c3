/**
 * The install as shipped: `kubectl kustomize manifests/base` (generate mode) or the cert-manager
 * overlay (files mode), applied object by object as `kubectl apply -k` would, with the policy
 * ConfigMap holding the run's first policy file. Uninstalled the way a Helm user does it (every
 * object of the install deleted, the namespace kept), so what the server itself leaves behind shows.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../../local-cluster/fake-apiserver/index.js';
import { repositoryRoot } from '../../../../local-cluster/util/repository-root.js';
import { requireTool } from '../../tools/tools.js';
import { NS, POLICY_CONFIGMAP, type TlsMode, type World } from './world.js';

const KUSTOMIZATIONS: Record<TlsMode, string> = { generate: 'manifests/base', files: 'manifests/overlays/cert-manager' };

/** The store key of a manifest's kind (the kinds the shipped manifests hold). */
const RESOURCES: Record<string, string> = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  Role: 'roles',
  ClusterRole: 'clusterroles',
  RoleBinding: 'rolebindings',
  ClusterRoleBinding: 'clusterrolebindings',
  ConfigMap: 'configmaps',
  Service: 'services',
  Deployment: 'deployments',
  PodDisruptionBudget: 'poddisruptionbudgets',
  Issuer: 'issuers.cert-manager.io',
  Certificate: 'certificates.cert-manager.io',
};

export interface ManifestObject {
  resource: string;
  namespace: string | undefined;
  object: KubeObject;
}

export async function renderManifests(mode: TlsMode): Promise<ManifestObject[]> {
  const { stdout } = await promisify(execFile)(requireTool('kubectl'), ['kustomize', KUSTOMIZATIONS[mode]], { cwd: repositoryRoot(), maxBuffer: 4 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((doc) => {
    const object = doc.toJSON() as KubeObject;
    const resource = RESOURCES[String(object.kind)];
    if (!resource) throw new Error(`install.ts does not know the kind ${String(object.kind)} of the shipped manifests: add it`);
    return { resource, namespace: object.metadata?.namespace, object };
  });
}

/** Creates every object, the policy ConfigMap with `policyText` instead of the shipped example. */
export async function install(world: World, manifests: readonly ManifestObject[], policyText: string): Promise<void> {
  for (const { resource, namespace, object } of manifests) {
    const body = resource === 'configmaps' && object.metadata?.name === POLICY_CONFIGMAP ? { ...object, data: { 'policy.yaml': policyText } } : object;
    await world.admin.create(resource, namespace, body);
  }
}

/** Deletes every object of the install but its Namespace (Helm's uninstall keeps it), as `kubectl delete` does. */
export async function uninstall(world: World, manifests: readonly ManifestObject[]): Promise<void> {
  for (const { resource, namespace, object } of [...manifests].reverse()) {
    if (resource === 'namespaces') continue;
    await world.admin.delete({ resource, namespace, name: object.metadata?.name ?? '' });
  }
}

/** Names of what is left in the install's namespace and of the install's cluster-scoped objects, after an uninstall. */
export function leftovers(world: World): string[] {
  const left: string[] = [];
  for (const resource of ['pods', 'secrets', 'leases', 'configmaps', 'deployments', 'replicasets', 'services', 'endpointslices']) {
    for (const object of world.store.list(resource, NS)) {
      // The namespace's own: the service account token's root CA ConfigMap is made by a controller, not the install.
      if (resource === 'configmaps' && object.metadata?.name === 'kube-root-ca.crt') continue;
      left.push(`${resource}/${object.metadata?.name ?? ''}`);
    }
  }
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    for (const object of world.store.list(resource)) left.push(`${resource}/${object.metadata?.name ?? ''}`);
  }
  return left;
}
