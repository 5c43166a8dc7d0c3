/**
 * Validates rendered objects against the upstream schemas, offline: the Kubernetes OpenAPI
 * schemas compiled into kubernetes-models, and cert-manager's CRD schemas compiled into
 * @kubernetes-models/cert-manager. Both check types, enums, formats and required fields. Like
 * the OpenAPI documents they come from, they accept unknown fields: local-cluster/util/strict-fields.ts checks
 * those for the built-in types. The optional monitoring objects (chart, manifests/components) are checked against the
 * Prometheus Operator's CRD schemas (@kubernetes-models/prometheus-operator).
 */
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Certificate, Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

interface Validatable {
  validate(): void;
}

type ModelFactory = (object: KubeObject) => Validatable;

// The models' constructors take their own typed shape; the schema check is what decides whether
// the plain object has it, so the casts below only hand the data over.
const MODELS: ReadonlyMap<string, ModelFactory> = new Map<string, ModelFactory>([
  ['v1/Namespace', (o) => new Namespace(o as unknown as ConstructorParameters<typeof Namespace>[0])],
  ['v1/ServiceAccount', (o) => new ServiceAccount(o as unknown as ConstructorParameters<typeof ServiceAccount>[0])],
  ['v1/ConfigMap', (o) => new ConfigMap(o as unknown as ConstructorParameters<typeof ConfigMap>[0])],
  ['v1/Service', (o) => new Service(o as unknown as ConstructorParameters<typeof Service>[0])],
  ['apps/v1/Deployment', (o) => new Deployment(o as unknown as ConstructorParameters<typeof Deployment>[0])],
  ['policy/v1/PodDisruptionBudget', (o) => new PodDisruptionBudget(o as unknown as ConstructorParameters<typeof PodDisruptionBudget>[0])],
  ['autoscaling/v2/HorizontalPodAutoscaler', (o) => new HorizontalPodAutoscaler(o as unknown as ConstructorParameters<typeof HorizontalPodAutoscaler>[0])],
  ['networking.k8s.io/v1/NetworkPolicy', (o) => new NetworkPolicy(o as unknown as ConstructorParameters<typeof NetworkPolicy>[0])],
  ['rbac.authorization.k8s.io/v1/ClusterRole', (o) => new ClusterRole(o as unknown as ConstructorParameters<typeof ClusterRole>[0])],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', (o) => new ClusterRoleBinding(o as unknown as ConstructorParameters<typeof ClusterRoleBinding>[0])],
  ['rbac.authorization.k8s.io/v1/Role', (o) => new Role(o as unknown as ConstructorParameters<typeof Role>[0])],
  ['rbac.authorization.k8s.io/v1/RoleBinding', (o) => new RoleBinding(o as unknown as ConstructorParameters<typeof RoleBinding>[0])],
  ['cert-manager.io/v1/Issuer', (o) => new Issuer(o as unknown as ConstructorParameters<typeof Issuer>[0])],
  ['cert-manager.io/v1/Certificate', (o) => new Certificate(o as unknown as ConstructorParameters<typeof Certificate>[0])],
  ['monitoring.coreos.com/v1/PodMonitor', (o) => new PodMonitor(o as unknown as ConstructorParameters<typeof PodMonitor>[0])],
  ['monitoring.coreos.com/v1/PrometheusRule', (o) => new PrometheusRule(o as unknown as ConstructorParameters<typeof PrometheusRule>[0])],
]);

/**
 * Schema problems of one object, empty when it is valid. An object of a type without a known
 * schema is a problem too: nothing goes unvalidated by accident.
 */
export function schemaProblems(object: KubeObject): string[] {
  const type = `${object.apiVersion}/${object.kind}`;
  const factory = MODELS.get(type);
  if (!factory) return [`${type} ${object.metadata.name}: no schema known for this type`];
  try {
    factory(object).validate();
    return [];
  } catch (error) {
    return [`${type} ${object.metadata.name}: ${error instanceof Error ? error.message : String(error)}`];
  }
}
