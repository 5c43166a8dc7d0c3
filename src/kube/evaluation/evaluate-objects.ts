import type { Authorize } from '../../cel/library/authorizer.js';
import { namespaceObjectName, namespaceObjectOf, type NamespaceSource } from '../../admission/namespace-object.js';
import type { GroupVersionResource, KubeObject, Webhook } from '../../admission/types.js';
import { admissionRequestFor, namespaceOf } from './admission-request.js';
import { asDecodedByKubeApiserver } from './kube-defaults/apply-defaults.js';
import { asStored } from './kube-defaults/stored-objects.js';
import { DEFAULT_SHAPE, type RequestShape } from './request-shape.js';
import { registeredWebhooks, simulateRegistered, type ObjectOutcome, type RunHandler } from './simulate.js';

/** One object to evaluate and where it came from. */
export interface Manifest {
  object: KubeObject;
  /** `file` (or `<stdin>`), document index (1-based) and, for List items, the item index; `cluster` for a listed object. */
  source: string;
}

/** One manifest and what kube-apiserver would make of it. */
export interface EvaluatedObject {
  manifest: Manifest;
  outcome: ObjectOutcome;
}

/** The resource an object is, as discovery names it. */
export interface DiscoveredKind {
  resource: GroupVersionResource;
  namespaced: boolean;
}

/** How manifests go through the evaluation path: the library's EvaluateOptions with the handler run given. */
export interface EvaluationPathOptions {
  /** How each handler runs: the server's review path (runAsCalled). */
  run: RunHandler;
  /** Namespaces the registered configurations leave out (own namespace + excludedNamespaces). */
  excludedNamespaces: readonly string[];
  /** Namespace of objects that name none. */
  defaultNamespace: string;
  /** Stored versions: an object that has one (same apiVersion group, kind, namespace, name) is an UPDATE. */
  oldObjects?: readonly KubeObject[];
  /** Namespace objects known besides those among the manifests (namespaceSelector, namespaceObject). */
  namespaces?: readonly KubeObject[];
  /** Answers the authorizer checks of matchConditions (the rules get theirs from the policy's options). */
  authorize?: Authorize;
  /** Operation, dry run, user and subresource of every request (default: CREATE, or UPDATE with a stored version). */
  shape?: RequestShape;
  /** The resource every manifest is, as discovery names it. */
  resource?: DiscoveredKind;
  /** Called after each object with how many are done, of how many. */
  onProgress?: (done: number, total: number) => void;
}

function keyOf(object: KubeObject, defaultNamespace: string): string {
  const group = (object.apiVersion ?? '').split('/').slice(0, -1).join('/');
  return `${group}/${object.kind}/${namespaceOf(object, defaultNamespace)}/${object.metadata?.name ?? ''}`;
}

/** A Namespace as kube-apiserver stores it (decoded, defaulted, what storage writes), shaped as namespaceObject. */
const storedNamespaceObject = (namespace: KubeObject): KubeObject => namespaceObjectOf(asStored(asDecodedByKubeApiserver(namespace)));

/**
 * The Namespaces known to the run, by name, each as kube-apiserver stores it and shaped as
 * namespaceObject; a namespace the run was not given is made up as one created with its name
 * alone (kube-apiserver admits nothing into a namespace it does not hold).
 */
function namespacesOf(options: EvaluationPathOptions, manifests: readonly Manifest[]): (name: string) => KubeObject {
  const namespaces = new Map<string, KubeObject>();
  for (const ns of [...(options.namespaces ?? []), ...manifests.map((m) => m.object)]) {
    if (ns.kind === 'Namespace' && ns.metadata?.name) namespaces.set(ns.metadata.name, storedNamespaceObject(ns));
  }
  return (name) => {
    let namespace = namespaces.get(name);
    if (!namespace) namespaces.set(name, (namespace = storedNamespaceObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
    return namespace;
  };
}

/** Every manifest through `webhooks`, one after another (each result independent of the others). */
export async function evaluateObjects(webhooks: readonly Webhook[], manifests: readonly Manifest[], options: EvaluationPathOptions): Promise<EvaluatedObject[]> {
  const results: EvaluatedObject[] = [];
  await evaluateEach(webhooks, manifests, options, (result) => void results.push(result));
  return results;
}

/**
 * evaluateObjects() handing each result to `onResult` as soon as it is made, holding none: a run
 * over thousands of objects keeps what its report needs of each, not every request and object.
 */
export async function evaluateEach(webhooks: readonly Webhook[], manifests: readonly Manifest[], options: EvaluationPathOptions, onResult: (result: EvaluatedObject) => void): Promise<void> {
  const old = new Map((options.oldObjects ?? []).map((o) => [keyOf(o, options.defaultNamespace), o]));
  const namespaceObjectFor = namespacesOf(options, manifests);
  const shape = options.shape ?? DEFAULT_SHAPE;
  const target = options.resource ? { resource: options.resource.resource, namespaced: options.resource.namespaced } : {};
  const simulation = { run: options.run, excludedNamespaces: options.excludedNamespaces, ...(options.authorize ? { authorize: options.authorize } : {}) };
  const registered = registeredWebhooks(webhooks, options.excludedNamespaces);
  let done = 0;
  for (const manifest of manifests) {
    const oldObject = old.get(keyOf(manifest.object, options.defaultNamespace));
    const request = admissionRequestFor(manifest.object, { defaultNamespace: options.defaultNamespace, ...shape, ...target, ...(oldObject ? { oldObject } : {}) });
    const namespace = namespaceObjectName(request);
    const namespaceObject = namespace === undefined ? null : namespaceObjectFor(namespace);
    const outcome = await simulateRegistered(registered, request, { ...simulation, namespaceObject });
    onResult({ manifest, outcome });
    options.onProgress?.(++done, manifests.length);
  }
}

/** What evaluating stored objects needs besides the webhooks. */
export interface StoredEvaluationOptions {
  run: RunHandler;
  /** Namespaces the registered configurations leave out (own namespace + excludedNamespaces). */
  excludedNamespaces: readonly string[];
  /** The cluster's Namespaces, shaped as namespaceObject. */
  namespaces: NamespaceSource;
}

/**
 * What the cluster already stores, each object through the policy as if it were created now
 * (the CREATE kube-apiserver would send for it, the mutating webhooks, then the validating
 * ones): the one path of `audit` and the server's background audit. A namespace the source does
 * not know (yet) is taken as one created with its name alone.
 */
export class StoredObjectEvaluation {
  readonly #registered: Webhook[];
  readonly #options: StoredEvaluationOptions;

  constructor(webhooks: readonly Webhook[], options: StoredEvaluationOptions) {
    this.#registered = registeredWebhooks(webhooks, options.excludedNamespaces);
    this.#options = options;
  }

  evaluate(object: KubeObject, kind: DiscoveredKind): Promise<ObjectOutcome> {
    const request = admissionRequestFor(object, { defaultNamespace: 'default', resource: kind.resource, namespaced: kind.namespaced });
    const name = namespaceObjectName(request);
    const namespaceObject = name === undefined ? null : (this.#options.namespaces.get(name) ?? storedNamespaceObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    return simulateRegistered(this.#registered, request, { run: this.#options.run, excludedNamespaces: this.#options.excludedNamespaces, namespaceObject });
  }
}
