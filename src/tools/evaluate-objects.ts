import type { KubeObject, Webhook } from '../policy/types.js';
import { admissionRequestFor, namespaceOf } from './admission-request.js';
import type { EvaluatedObject } from './evaluate-report.js';
import type { Manifest } from './manifests.js';
import { DEFAULT_SHAPE, type RequestShape } from './request-shape.js';
import { simulate } from './simulate.js';

export interface EvaluateOptions {
  /** Namespaces the registered configurations leave out (own namespace + excludedNamespaces). */
  excludedNamespaces: readonly string[];
  /** Namespace of objects that name none. */
  defaultNamespace: string;
  /** Stored versions: an object that has one (same apiVersion group, kind, namespace, name) is an UPDATE. */
  oldObjects?: readonly KubeObject[];
  /** Namespace objects known besides those among the manifests (namespaceSelector, namespaceObject). */
  namespaces?: readonly KubeObject[];
  /** Operation, dry run, user and subresource of every request (default: CREATE, or UPDATE with a stored version). */
  shape?: RequestShape;
}

function keyOf(object: KubeObject, defaultNamespace: string): string {
  const group = (object.apiVersion ?? '').split('/').slice(0, -1).join('/');
  return `${group}/${object.kind}/${namespaceOf(object, defaultNamespace)}/${object.metadata?.name ?? ''}`;
}

/** Every manifest through `webhooks`, one after another (each result independent of the others). */
export async function evaluateObjects(webhooks: readonly Webhook[], manifests: readonly Manifest[], options: EvaluateOptions): Promise<EvaluatedObject[]> {
  const old = new Map((options.oldObjects ?? []).map((o) => [keyOf(o, options.defaultNamespace), o]));
  const namespaces = new Map<string, KubeObject>();
  for (const ns of [...(options.namespaces ?? []), ...manifests.map((m) => m.object)]) {
    if (ns.kind === 'Namespace' && ns.metadata?.name) namespaces.set(ns.metadata.name, ns);
  }
  const results: EvaluatedObject[] = [];
  for (const manifest of manifests) {
    const oldObject = old.get(keyOf(manifest.object, options.defaultNamespace));
    const shape = options.shape ?? DEFAULT_SHAPE;
    const request = admissionRequestFor(manifest.object, { defaultNamespace: options.defaultNamespace, ...shape, ...(oldObject ? { oldObject } : {}) });
    const namespaceObject = request.namespace && request.kind.kind !== 'Namespace' ? (namespaces.get(request.namespace) ?? null) : null;
    const outcome = await simulate(webhooks, request, { excludedNamespaces: options.excludedNamespaces, namespaceObject });
    results.push({ manifest, outcome });
  }
  return results;
}
