/**
 * The params of one binding (CollectParams of k8s.io/apiserver policy/generic): none without a
 * paramKind or a paramRef (the policy runs once with params null); the object paramRef.name
 * names, or every object paramRef.selector selects, in paramRef.namespace or else the
 * request's namespace for a namespaced kind; none found under parameterNotFoundAction Deny is
 * a configuration error, under Allow the policy does not run. Texts as there.
 */
import type { AdmissionSource, KubeObject } from '../fake-apiserver/index.js';
import { selectorMatches, type LabelSelector } from '../fake-apiserver/label-selector.js';
import { isRecord } from '../fake-apiserver/objects.js';

type Json = Record<string, unknown>;

export type CollectedParams = { objects: Array<KubeObject | undefined> } | { error: string };

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function collectParams(source: AdmissionSource, paramKind: unknown, paramRef: unknown, namespace: string): CollectedParams {
  if (!isRecord(paramKind) || !isRecord(paramRef)) return { objects: [undefined] };
  const kind = paramKind as Json;
  const ref = paramRef as Json;
  const refNamespace = text(ref.namespace);
  const found = source.params(text(kind.apiVersion), text(kind.kind), refNamespace || namespace);
  // Go's generated String() of the ParamKind struct.
  if (!found) return { error: `paramKind kind \`&ParamKind{APIVersion:${text(kind.apiVersion)},Kind:${text(kind.kind)},}\` not known` };
  if (found.namespaced && refNamespace === '' && namespace === '') {
    return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' };
  }
  if (!found.namespaced && refNamespace !== '') return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' };
  let objects: KubeObject[];
  if (text(ref.name) !== '') {
    objects = found.objects.filter((o) => o.metadata?.name === text(ref.name));
  } else if (isRecord(ref.selector)) {
    objects = found.objects.filter((o) => selectorMatches(ref.selector as LabelSelector, o.metadata?.labels ?? {}));
  } else {
    return { error: 'one of name or selector must be provided' };
  }
  if (objects.length === 0 && ref.parameterNotFoundAction === 'Deny') {
    return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
  }
  return { objects };
}
