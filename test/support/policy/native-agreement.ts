/**
 * One rule, two engines: what `evaluate` answers for a write (the product's
 * library path: the policy file loaded as the tools load it, each object through
 * evaluateObjects) beside what the API double's own ValidatingAdmissionPolicy plugin (CEL by
 * @bufbuild/cel, not the product's) answers for the same write sent over HTTPS, and both brought
 * to one comparable shape. Used by test/tools-native-agreement.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWebhookAdmission, type WebhookAdmission } from '../../../local-cluster/admission-caller/index.js';
import { startFakeApiServer, type FakeApiServer, type KubeObject } from '../../../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../../../local-cluster/fake-apiserver/raw-client.js';
import { nativePolicyObjects, type NativeInput } from '../../../src/registration/native-policy-objects.js';
import { nativeObstacles } from '../../../src/policy/engine.js';
import type { PolicyEntry } from '../../../src/policy/policy.js';
import type { Webhook } from '../../../src/admission/types.js';
import { evaluateObjects } from '../../../src/tools/evaluation.js';
import { userInfoOf } from '../../../src/kube/evaluation/request-shape.js';
import { loadToolPolicy, toolPolicyOptions } from '../../../src/tools/tool-io.js';

/** The server's own namespace in both worlds (where the params ConfigMaps live). */
export const OWN_NAMESPACE = 'admission';
export const CONFIG_NAME = 'kas';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** One write: the object (for DELETE the stored one), its stored version for an UPDATE, who sends it. */
export interface WriteCase {
  label: string;
  operation: Operation;
  object: KubeObject;
  oldObject?: KubeObject;
  user?: { username: string; groups: string[] };
}

/** What one engine made of a write, reduced to what both can say. */
export interface Answer {
  allowed: boolean;
  /** HTTP status code of the denial. */
  code?: number;
  /**
   * What the denial says of the rule: the double, kube-apiserver's words for the first failed
   * validation; the product, each denying webhook's message (all its failed validations, joined by "; ").
   */
  denials: string[];
  /** The failed validations' messages warned about, each once, sorted. */
  warnings: string[];
  /** validation_failure's entries (`<expression index>: <message>`), in the order recorded. */
  auditFailures: string[];
}

const RESOURCES: Record<string, { prefix: string; resource: string }> = {
  Pod: { prefix: '/api/v1', resource: 'pods' },
  ConfigMap: { prefix: '/api/v1', resource: 'configmaps' },
  Service: { prefix: '/api/v1', resource: 'services' },
  Secret: { prefix: '/api/v1', resource: 'secrets' },
  Deployment: { prefix: '/apis/apps/v1', resource: 'deployments' },
  CronJob: { prefix: '/apis/batch/v1', resource: 'cronjobs' },
};

function pathOf(object: KubeObject, withName: boolean): string {
  const where = RESOURCES[object.kind ?? ''];
  if (!where) throw new Error(`no REST path for kind ${object.kind}`);
  const namespace = object.metadata?.namespace ?? 'default';
  return `${where.prefix}/namespaces/${namespace}/${where.resource}${withName ? `/${object.metadata?.name ?? ''}` : ''}`;
}

/** Go's `299 - "text"` warning header back to its text. */
function warningTexts(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : header.split(/,(?=\s*299 )/);
  return values.map((v) => {
    const match = /^\s*299 - "((?:[^"\\]|\\.)*)"/.exec(Buffer.from(v, 'latin1').toString('utf8'));
    return match ? match[1]!.replace(/\\(.)/g, '$1') : v;
  });
}

const sortedUnique = (values: string[]): string[] => [...new Set(values)].sort();

function auditEntries(value: string | undefined): string[] {
  if (value === undefined) return [];
  return (JSON.parse(value) as Array<{ message: string; expressionIndex: number }>).map((e) => `${e.expressionIndex}: ${e.message}`);
}

/** The policy as `evaluate` loads it. */
export interface ProductPolicy {
  webhooks: Webhook[];
  entries: PolicyEntry[];
  excludedNamespaces: string[];
}

export async function loadProductPolicy(dir: string, text: string): Promise<ProductPolicy> {
  const path = join(dir, `policy-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(path, text);
  const loaded = await loadToolPolicy(path, toolPolicyOptions({ namespace: OWN_NAMESPACE, kubernetesVersion: undefined }));
  return { webhooks: loaded.webhooks, entries: loaded.policy.entries, excludedNamespaces: loaded.excludedNamespaces };
}

/** `evaluate`'s answer for one write, the namespaces known as the double holds them. */
export async function productAnswer(policy: ProductPolicy, write: WriteCase, namespaces: readonly KubeObject[]): Promise<Answer> {
  const user = write.user ? userInfoOf(write.user.username, write.user.groups) : undefined;
  const [result] = await evaluateObjects(policy.webhooks, [{ object: write.object, source: write.label }], {
    excludedNamespaces: policy.excludedNamespaces,
    defaultNamespace: 'default',
    namespaces,
    ...(write.oldObject ? { oldObjects: [write.oldObject] } : {}),
    shape: { operation: write.operation, dryRun: true, userInfo: user ?? userInfoOf(undefined, []) },
  });
  const outcome = result!.outcome;
  const called = outcome.webhooks.filter((w) => w.decision !== 'skipped');
  // A webhook's warning is `<source>: <message>`, source being the webhook's name.
  const warnings = called.flatMap((w) => w.warnings.map((text) => text.replace(/^[^:]+: /, '')));
  const auditFailures = called.flatMap((w) => auditEntries(w.auditAnnotations['validation_failure']));
  const denied = outcome.webhooks.filter((w) => !w.allowed);
  return {
    allowed: outcome.allowed,
    ...(denied[0] ? { code: denied[0].code ?? 403 } : {}),
    denials: denied.map((w) => w.message ?? ''),
    warnings: sortedUnique(warnings),
    auditFailures,
  };
}

/**
 * The object `evaluate` says the mutating webhooks would leave (the product's built-ins, as the
 * server runs them), or the denial's message.
 */
export async function productMutated(policy: ProductPolicy, write: WriteCase): Promise<KubeObject | null> {
  const [result] = await evaluateObjects(policy.webhooks, [{ object: write.object, source: write.label }], {
    excludedNamespaces: policy.excludedNamespaces,
    defaultNamespace: 'default',
    shape: { operation: write.operation, dryRun: true, userInfo: userInfoOf(undefined, []) },
  });
  return result!.outcome.object;
}

/** The object the double would store for a CREATE (a dry run through its admission chain: the mutating policies). */
export async function doubleMutated(double: PolicyDouble, write: WriteCase): Promise<KubeObject> {
  const reply = await rawRequest(double.api, 'POST', `${pathOf(write.object, false)}?dryRun=All`, { body: write.object });
  if (reply.status !== 201) throw new Error(`${write.label}: ${reply.status} ${reply.text}`);
  return reply.json as KubeObject;
}

/** The double with its admission chain (no webhook is registered: only policies decide). */
export interface PolicyDouble {
  api: FakeApiServer;
  admission: WebhookAdmission;
  close(): Promise<void>;
}

export async function startPolicyDouble(namespaces: Record<string, Record<string, string>>): Promise<PolicyDouble> {
  const api = await startFakeApiServer({ namespaces: [OWN_NAMESPACE] });
  for (const [name, labels] of Object.entries(namespaces)) api.store.createNamespace(name, labels);
  const admission = createWebhookAdmission({
    store: api.store,
    resolveService: () => {
      throw new Error('no webhook is registered in this double');
    },
  });
  api.setAdmission(admission.admission);
  return {
    api,
    admission,
    close: async () => {
      admission.close();
      await api.close();
    },
  };
}

/** Creates `object` through the double's REST API (its validation and defaults), failing loudly. */
export async function createThrough(api: FakeApiServer, object: KubeObject): Promise<void> {
  const kind = object.kind ?? '';
  const cluster: Record<string, string> = {
    ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    ValidatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
    MutatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies',
    MutatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicybindings',
    CustomResourceDefinition: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  };
  const path = cluster[kind] ?? (RESOURCES[kind] ? pathOf(object, false) : undefined) ?? customPath(api, object);
  const reply = await rawRequest(api, 'POST', path, { body: object });
  if (reply.status !== 201) throw new Error(`creating ${kind} ${object.metadata?.name}: ${reply.status} ${reply.text}`);
}

/** A cluster-scoped custom resource's collection (the ported params: a ReplicaLimit, Gatekeeper's constraints), named by its CRD. */
function customPath(api: FakeApiServer, object: KubeObject): string {
  const [group, version] = (object.apiVersion ?? '').split('/');
  const crd = api.store.list('customresourcedefinitions').find((c) => {
    const spec = c.spec as { group?: string; names?: { kind?: string } } | undefined;
    return spec?.group === group && spec?.names?.kind === object.kind;
  });
  const plural = (crd?.spec as { names?: { plural?: string } } | undefined)?.names?.plural;
  if (!plural) throw new Error(`no CustomResourceDefinition for ${object.apiVersion} ${object.kind} in the double`);
  return `/apis/${group}/${version}/${plural}`;
}

/** The product's mapping of every entry that may run natively, created in the double; the entries left out, with why. */
export async function installMapped(api: FakeApiServer, policy: ProductPolicy): Promise<string[]> {
  const input: NativeInput = { configName: CONFIG_NAME, namespace: OWN_NAMESPACE, excludedNamespaces: policy.excludedNamespaces.filter((n) => n !== OWN_NAMESPACE) };
  const skipped: string[] = [];
  for (const entry of policy.entries) {
    const obstacles = nativeObstacles(entry);
    if (obstacles.length > 0) {
      skipped.push(`${entry.spec.name}: ${obstacles.join('; ')}`);
      continue;
    }
    const objects = nativePolicyObjects(entry, input);
    if (objects.params) await createThrough(api, objects.params as KubeObject);
    await createThrough(api, objects.policy as KubeObject);
    await createThrough(api, objects.binding as KubeObject);
  }
  return skipped;
}

/**
 * The stored version of an UPDATE or DELETE, put in the store directly: through the REST API the
 * policies under test would judge it too.
 */
export function seedStored(api: FakeApiServer, write: WriteCase): void {
  const stored = write.operation === 'UPDATE' ? write.oldObject : write.operation === 'DELETE' ? write.object : undefined;
  if (stored) api.store.create(RESOURCES[stored.kind ?? '']!.resource, structuredClone(stored));
}

const VAP_DENIAL = /^.* is forbidden: ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: /;
const VAP_WARNING = /^Validation failed for ValidatingAdmissionPolicy '[^']+' with binding '[^']+': /;

/** The double's answer: the write sent as a dry run through its REST API and admission chain. */
export async function doubleAnswer(double: PolicyDouble, write: WriteCase): Promise<Answer & { raw: string }> {
  const token = write.user ? double.api.issueToken(write.user) : undefined;
  const options = token ? { token } : {};
  const auditsBefore = double.admission.audits.length;
  const reply =
    write.operation === 'CREATE'
      ? await rawRequest(double.api, 'POST', `${pathOf(write.object, false)}?dryRun=All`, { ...options, body: write.object })
      : write.operation === 'UPDATE'
        ? await rawRequest(double.api, 'PUT', `${pathOf(write.object, true)}?dryRun=All`, { ...options, body: write.object })
        : await rawRequest(double.api, 'DELETE', `${pathOf(write.object, true)}?dryRun=All`, options);
  if (token) double.api.revokeToken(token);
  const audits = double.admission.audits.slice(auditsBefore);
  const auditFailures = audits.flatMap((a) => auditEntries(a.annotations['validation.policy.admission.k8s.io/validation_failure']));
  const warnings = warningTexts(reply.headers['warning']).filter((w) => VAP_WARNING.test(w)).map((w) => w.replace(VAP_WARNING, ''));
  const allowed = reply.status >= 200 && reply.status < 300;
  const message = (reply.json as { message?: string } | undefined)?.message ?? reply.text;
  return {
    allowed,
    ...(allowed ? {} : { code: reply.status }),
    denials: allowed ? [] : [message.replace(VAP_DENIAL, '')],
    warnings: sortedUnique(warnings),
    auditFailures,
    raw: allowed ? '' : message,
  };
}
