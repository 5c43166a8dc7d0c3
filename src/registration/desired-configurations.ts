import type {
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1OwnerReference,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { namespaceSelectorExcluding } from '../webhooks/excluded-namespaces.js';
import { webhookPath } from '../webhooks/group-path.js';
import type { WebhookSpec } from '../admission/types.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'kube-admission-server';
/** kube-apiserver's default Service port; the Service maps it to the webhook port. */
export const SERVICE_PORT = 443;
/** The kind of ownerReference this server manages on its configurations (--owner-cluster-role). */
export const OWNER_API_VERSION = 'rbac.authorization.k8s.io/v1';
export const OWNER_KIND = 'ClusterRole';

export interface DesiredConfigurationInput {
  configName: string;
  serviceName: string;
  namespace: string;
  /** PEM bundle the apiserver trusts for this server (one or more CA certificates). */
  caBundlePem: string;
  /**
   * `https://host:port` that kube-apiserver dials instead of the Service (the dev loop, a server
   * outside the cluster): each webhook's clientConfig is then `url: <urlBase><path>`.
   */
  urlBase?: string;
  webhooks: readonly WebhookSpec[];
  /** Namespaces never intercepted besides the own one (kube-system by default). */
  excludedNamespaces: readonly string[];
  /**
   * The ClusterRole owning the configurations, so that uninstalling garbage-collects them. With
   * no uid (it does not exist right now) the configurations get no ClusterRole ownerReference,
   * and one they carry is removed: the garbage collector would delete them for it.
   */
  owner?: { name: string; uid: string | undefined };
}

export interface DesiredConfigurations {
  mutating: V1MutatingWebhookConfiguration;
  validating: V1ValidatingWebhookConfiguration;
}

/** The registered name: at least three DNS segments, unique per service. */
export function registeredWebhookName(spec: Pick<WebhookSpec, 'name'>, input: Pick<DesiredConfigurationInput, 'serviceName' | 'namespace'>): string {
  return `${spec.name}.${input.serviceName}.${input.namespace}.svc`;
}

/** Fields shared by both webhook kinds, every apiserver default written out so a read-back compares equal. */
function commonWebhookFields(spec: WebhookSpec, input: DesiredConfigurationInput): V1ValidatingWebhook {
  return {
    name: registeredWebhookName(spec, input),
    admissionReviewVersions: ['v1'],
    clientConfig: {
      ...(input.urlBase !== undefined
        ? { url: `${input.urlBase}${webhookPath(spec)}` }
        : { service: { name: input.serviceName, namespace: input.namespace, path: webhookPath(spec), port: SERVICE_PORT } }),
      caBundle: Buffer.from(input.caBundlePem, 'utf8').toString('base64'),
    },
    rules: spec.rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })),
    failurePolicy: spec.failurePolicy,
    matchPolicy: spec.matchPolicy,
    sideEffects: spec.sideEffects,
    timeoutSeconds: spec.timeoutSeconds,
    namespaceSelector: namespaceSelectorExcluding(spec.namespaceSelector, [input.namespace, ...input.excludedNamespaces]),
    objectSelector: spec.objectSelector ?? {},
    ...(spec.matchConditions && spec.matchConditions.length > 0 ? { matchConditions: spec.matchConditions } : {}),
  };
}

export function metadataFor(input: Pick<DesiredConfigurationInput, 'configName' | 'owner'>): V1MutatingWebhookConfiguration['metadata'] {
  // An empty list is "no owner of ours": configuration-diff then removes a stale one.
  const ownerReferences: V1OwnerReference[] | undefined =
    input.owner && (input.owner.uid === undefined ? [] : [{ apiVersion: OWNER_API_VERSION, kind: OWNER_KIND, name: input.owner.name, uid: input.owner.uid }]);
  return {
    name: input.configName,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
    ...(ownerReferences ? { ownerReferences } : {}),
  };
}

/** The two configurations this server should have registered, from its webhooks and CA bundle. */
export function desiredConfigurations(input: DesiredConfigurationInput): DesiredConfigurations {
  const mutatingWebhooks: V1MutatingWebhook[] = input.webhooks
    .filter((spec) => spec.type === 'mutating')
    .map((spec) => ({ ...commonWebhookFields(spec, input), reinvocationPolicy: spec.reinvocationPolicy ?? 'Never' }));
  const validatingWebhooks = input.webhooks.filter((spec) => spec.type === 'validating').map((spec) => commonWebhookFields(spec, input));
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: metadataFor(input),
      webhooks: mutatingWebhooks,
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: metadataFor(input),
      webhooks: validatingWebhooks,
    },
  };
}
