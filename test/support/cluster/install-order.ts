/**
 * An install's objects created and deleted one by one through the local cluster's API as an
 * administrator, in the order a tool uses: Helm sorts by kind (below), `kubectl apply -k` and
 * `kubectl delete -k` go in the order kustomize renders. An install or an uninstall as the tool
 * does it, without the tool (test/local-cluster-helm.test.ts runs the real helm).
 */
import { ADMIN_USER, type KubeObject } from '../../../local-cluster/fake-apiserver/index.js';
import type { ResourceType } from '../../../local-cluster/fake-apiserver/resources.js';
import { ClusterClient, isNotFound } from '../../../local-cluster/cluster/api-client.js';
import type { LocalCluster } from '../../../local-cluster/cluster/index.js';

/** helm.sh/helm/v3/pkg/releaseutil/kind_sorter.go, InstallOrder: the kinds this chart renders, in that order. */
export const HELM_INSTALL_ORDER = ['Namespace', 'PodDisruptionBudget', 'ServiceAccount', 'Secret', 'ConfigMap', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Service', 'Deployment', 'HorizontalPodAutoscaler'];
/** kind_sorter.go, UninstallOrder (the same kinds). */
export const HELM_UNINSTALL_ORDER = ['Service', 'HorizontalPodAutoscaler', 'Deployment', 'RoleBinding', 'Role', 'ClusterRoleBinding', 'ClusterRole', 'ConfigMap', 'Secret', 'ServiceAccount', 'PodDisruptionBudget', 'Namespace'];

/** By kind in `order`; without one, as rendered. */
const sortedBy = (objects: readonly KubeObject[], order: readonly string[] | undefined): KubeObject[] =>
  order ? [...objects].sort((a, b) => order.indexOf(a.kind ?? '') - order.indexOf(b.kind ?? '')) : [...objects];

export class InstallObjects {
  readonly admin: ClusterClient;

  constructor(
    private readonly cluster: LocalCluster,
    readonly objects: readonly KubeObject[],
    readonly namespace: string,
  ) {
    this.admin = new ClusterClient(cluster.api, ADMIN_USER);
  }

  /** Kinds rendered that `order` does not place (a test should fail on them). */
  unordered(order: readonly string[]): string[] {
    return this.objects.map((o) => o.kind ?? '').filter((kind) => !order.includes(kind));
  }

  /** The local cluster's type for an object (by group and kind, as the API's discovery serves it). */
  typeOf(object: KubeObject): ResourceType {
    const apiVersion = object.apiVersion ?? '';
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
    const type = this.cluster.api.store.types.forKind(group, object.kind ?? '');
    if (!type) throw new Error(`the local cluster does not serve ${object.kind}`);
    return type;
  }

  /** Creates each object by kind in `order` (as rendered without one). */
  async install(order?: readonly string[]): Promise<void> {
    for (const object of sortedBy(this.objects, order)) await this.create(object);
  }

  /** Deletes each object (background propagation, as both tools do), the next right after the previous; one already gone is skipped. */
  async uninstall(order?: readonly string[]): Promise<void> {
    for (const object of sortedBy(this.objects, order)) {
      await this.delete(object).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
  }

  /** The object as the chart renders it, by kind. */
  one(kind: string): KubeObject {
    const found = this.objects.find((o) => o.kind === kind);
    if (!found) throw new Error(`the chart renders no ${kind}`);
    return found;
  }

  create(object: KubeObject): Promise<KubeObject> {
    const type = this.typeOf(object);
    return this.admin.create(type.key, type.namespaced ? this.namespace : undefined, object);
  }

  delete(object: KubeObject): Promise<void> {
    const type = this.typeOf(object);
    const ref = { resource: type.key, ...(type.namespaced ? { namespace: this.namespace } : {}), name: object.metadata!.name! };
    return this.admin.delete(ref, { propagationPolicy: 'Background' });
  }
}
