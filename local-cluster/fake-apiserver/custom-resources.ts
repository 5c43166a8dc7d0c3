/**
 * CustomResourceDefinitions: a CRD in the store makes its kind served (discovery, REST, watch,
 * printing with its additionalPrinterColumns), stored generically, as apiextensions-apiserver
 * does; its status conditions turn Established. Deleting the CRD removes the kind and its objects.
 * Simplifications: only the storage version is served, and objects are not pruned or validated
 * against the CRD's schema (they keep unknown fields).
 */
import { isRecord, kubeTime, type KubeObject } from './objects.js';
import { AGE_COLUMN, NAME_COLUMN, humanDuration } from './printers.js';
import { ALL_VERBS, type ColumnSpec, type ResourceType } from './resources.js';
import type { ObjectStore, StoreEvent } from './store.js';

type Json = Record<string, unknown>;

const rec = (value: unknown): Json => (isRecord(value) ? value : {});
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** The subset of JSONPath that printer columns use: `.a.b`, `[0]`, `[?(@.type=="Ready")]`. */
export function evaluateJsonPath(object: unknown, path: string): unknown {
  const tokens = path.match(/\.[^.[\]]+|\[\?\(@\.[^=]+==["'][^"']*["']\)\]|\[\d+\]/g) ?? [];
  let current: unknown = object;
  for (const token of tokens) {
    if (current === undefined || current === null) return undefined;
    if (token.startsWith('.')) current = rec(current)[token.slice(1)];
    else if (token.startsWith('[?')) {
      const m = /^\[\?\(@\.([^=]+)==["']([^"']*)["']\)\]$/.exec(token);
      current = Array.isArray(current) ? current.find((item) => String(rec(item)[m?.[1] ?? '']) === m?.[2]) : undefined;
    } else current = Array.isArray(current) ? current[Number(token.slice(1, -1))] : undefined;
  }
  return current;
}

function printerColumn(definition: Json): ColumnSpec {
  const type = String(definition.type ?? 'string') as ColumnSpec['type'];
  const path = String(definition.jsonPath ?? '');
  return {
    name: String(definition.name ?? ''),
    type,
    format: typeof definition.format === 'string' ? definition.format : undefined,
    description: typeof definition.description === 'string' ? definition.description : undefined,
    priority: typeof definition.priority === 'number' ? definition.priority : 0,
    cell: (object, now) => {
      const value = evaluateJsonPath(object, path);
      if (value === undefined || value === null) return null;
      // cellForJSONValue: dates become ages.
      if (type === 'date') return typeof value === 'string' ? humanDuration(now.getTime() - Date.parse(value)) : '<invalid>';
      return type === 'string' && typeof value !== 'string' ? JSON.stringify(value) : value;
    },
  };
}

/** The served storage version of a CRD as a resource type. */
export function customResourceType(crd: KubeObject): ResourceType | undefined {
  const spec = rec(crd.spec);
  const names = rec(spec.names);
  const group = String(spec.group ?? '');
  const plural = String(names.plural ?? '');
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
  const version = versions.find((v) => v.storage === true && v.served !== false) ?? versions.find((v) => v.served !== false);
  if (group === '' || plural === '' || !version) return undefined;
  const subresources = rec(version.subresources);
  const columns = Array.isArray(version.additionalPrinterColumns) ? version.additionalPrinterColumns.filter(isRecord).map(printerColumn) : [];
  return {
    key: `${plural}.${group}`,
    group,
    version: String(version.name ?? ''),
    resource: plural,
    kind: String(names.kind ?? ''),
    singular: String(names.singular ?? String(names.kind ?? '').toLowerCase()),
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    namespaced: spec.scope !== 'Cluster',
    verbs: ALL_VERBS,
    nameRule: 'subdomain',
    allowUnconditionalUpdate: true,
    generationField: 'spec',
    subresources: [...(isRecord(subresources.status) ? ['status'] : []), ...(isRecord(subresources.scale) ? ['scale'] : [])],
    mergeKeys: {},
    columns: columns.length > 0 ? [NAME_COLUMN, ...columns] : [NAME_COLUMN, AGE_COLUMN],
    custom: true,
    preservesUnknownFields: true,
  };
}

function establishedStatus(crd: KubeObject): Json {
  const now = kubeTime();
  const condition = (type: string, reason: string, message: string): Json => ({ type, status: 'True', lastTransitionTime: now, reason, message });
  return {
    acceptedNames: rec(rec(crd.spec).names),
    conditions: [condition('NamesAccepted', 'NoConflicts', 'no conflicts found'), condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
    storedVersions: (Array.isArray(rec(crd.spec).versions) ? (rec(crd.spec).versions as unknown[]) : []).filter((v) => rec(v).storage === true).map((v) => String(rec(v).name)),
  };
}

/** Keeps the store's served types in step with its CRDs; returns the unsubscribe function. */
export function serveCustomResources(store: ObjectStore): () => void {
  const registered = new Map<string, string>();
  const apply = (event: StoreEvent): void => {
    if (event.resource !== 'customresourcedefinitions') return;
    const name = event.object.metadata?.name ?? '';
    const previous = registered.get(name);
    if (event.type === 'DELETED') {
      if (previous) {
        store.dropAll(previous);
        store.types.remove(previous);
        registered.delete(name);
      }
      return;
    }
    const type = customResourceType(event.object);
    if (!type) return;
    if (previous && previous !== type.key) store.types.remove(previous);
    store.types.add(type);
    registered.set(name, type.key);
    if (!isRecord(event.object.status) || !Array.isArray(event.object.status.conditions)) {
      // The establishing controller writes the status after the create returned.
      queueMicrotask(() => {
        const current = store.get('customresourcedefinitions', undefined, name);
        if (current && current.metadata?.uid === event.object.metadata?.uid) store.update('customresourcedefinitions', { ...current, status: establishedStatus(current) });
      });
    }
  };
  for (const crd of store.list('customresourcedefinitions')) apply({ type: 'ADDED', resource: 'customresourcedefinitions', object: crd, resourceVersion: 0 });
  return store.subscribe(apply);
}
