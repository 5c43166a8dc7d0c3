/**
 * The parts of kube-apiserver's validation of Pods, Deployments, ReplicaSets and Services that
 * a user of the local cluster is most likely to meet, with their texts. Far from all of it: the
 * double is not a validating oracle for workloads, only for webhook configurations.
 */
import { invalidValue, required, type FieldError } from './field-errors.js';
import { selectorMatches, type LabelSelector } from './label-selector.js';
import { validateObjectMeta } from './meta-validation.js';
import { isDns1123Label } from './names.js';
import { isRecord, type KubeObject } from './objects.js';

type Json = Record<string, unknown>;

const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

function validateContainers(spec: Json, path: string): FieldError[] {
  const containers = records(spec.containers);
  if (containers.length === 0) return [required(`${path}.containers`, '')];
  const errors: FieldError[] = [];
  containers.forEach((container, index) => {
    const at = `${path}.containers[${index}]`;
    const name = typeof container.name === 'string' ? container.name : '';
    if (name === '') errors.push(required(`${at}.name`, ''));
    else for (const message of isDns1123Label(name)) errors.push(invalidValue(`${at}.name`, name, message));
    if (typeof container.image !== 'string' || container.image.trim() === '') errors.push(required(`${at}.image`, ''));
  });
  return errors;
}

export function validatePod(pod: KubeObject): FieldError[] {
  const errors = validateObjectMeta(pod.metadata ?? {}, 'subdomain');
  return [...errors, ...validateContainers(isRecord(pod.spec) ? pod.spec : {}, 'spec')];
}

/** Go's %v of a map[string]string, as the selector error prints the template labels. */
function goMapText(labels: Record<string, string>): string {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  return `map[string]string{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;
}

/** Deployments and ReplicaSets: a non-empty selector that the template's labels satisfy. */
export function validatePodController(object: KubeObject): FieldError[] {
  const errors = validateObjectMeta(object.metadata ?? {}, 'subdomain');
  const spec = isRecord(object.spec) ? object.spec : {};
  const selector = isRecord(spec.selector) ? (spec.selector as LabelSelector) : undefined;
  const template = isRecord(spec.template) ? spec.template : {};
  const templateMeta = isRecord(template.metadata) ? template.metadata : {};
  const labels = (isRecord(templateMeta.labels) ? templateMeta.labels : {}) as Record<string, string>;
  const emptySelector = !selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0);
  if (!selector) errors.push(required('spec.selector', ''));
  else if (emptySelector) errors.push(invalidValue('spec.selector', selector, 'empty selector is invalid for deployment'));
  else if (!selectorMatches(selector, labels)) {
    errors.push({ type: 'Invalid', field: 'spec.template.metadata.labels', badValue: goMapText(labels), detail: '`selector` does not match template `labels`', rawBadValue: true });
  }
  if (typeof spec.replicas === 'number' && spec.replicas < 0) errors.push(invalidValue('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
  return [...errors, ...validateContainers(isRecord(template.spec) ? template.spec : {}, 'spec.template.spec')];
}

export function validateService(service: KubeObject): FieldError[] {
  const errors = validateObjectMeta(service.metadata ?? {}, 'label');
  const spec = isRecord(service.spec) ? service.spec : {};
  if ((spec.type ?? 'ClusterIP') !== 'ExternalName' && records(spec.ports).length === 0) errors.push(required('spec.ports', ''));
  return errors;
}
