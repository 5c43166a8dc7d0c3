/**
 * The controllers apiextensions-apiserver runs inside kube-apiserver, each a status write of its
 * own as there: the naming controller (accepted names, NamesAccepted, Established=False
 * Installing; a name another CRD of the group holds is a conflict), the establishing controller
 * (Established=True), and the finalizer (a deleted CRD turns Terminating, its objects are
 * deleted, `customresourcecleanup.apiextensions.k8s.io` goes and with it the CRD). They act on the
 * store with no lag, on the next turn of the event loop after the write that needs them.
 * Left out: the 5 s wait before Established when kube-apiserver's --apiserver-count is above 1
 * (kubeadm and most installs leave it at 1).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  CLEANUP_FINALIZER,
  acceptedNamesOf,
  conditionOf,
  conditionsOf,
  crdSpec,
  isConditionTrue,
  type CrdCondition,
  type CrdNames,
} from './crd-object.js';
import { clone, isRecord, kubeTime, type KubeObject } from './objects.js';
import type { ObjectStore } from './store.js';

const CRDS = 'customresourcedefinitions';
/** The finalizer's wait for the objects to go: every 5 s for a minute (deleteInstances). */
const INSTANCE_POLL_MS = 5000;
const INSTANCE_WAIT_MS = 60_000;

type Condition = Omit<CrdCondition, 'lastTransitionTime'>;

/** SetCRDCondition: replaces the condition of that type, its transition time kept while its status holds. */
function withCondition(crd: KubeObject, condition: Condition): KubeObject {
  const next = clone(crd);
  const conditions = conditionsOf(crd);
  const old = conditions.find((c) => c.type === condition.type);
  const time = old && old.status === condition.status && old.lastTransitionTime ? old.lastTransitionTime : kubeTime();
  const entry = { type: condition.type, status: condition.status, lastTransitionTime: time, reason: condition.reason, message: condition.message };
  const status = isRecord(next.status) ? next.status : {};
  status.conditions = old ? conditions.map((c) => (c.type === condition.type ? entry : c)) : [...conditions, entry];
  next.status = status;
  return next;
}

/** The names and kinds the group's other CRDs have been accepted under. */
function namesInUse(store: ObjectStore, crd: KubeObject): { resources: Set<string>; kinds: Set<string> } {
  const group = crdSpec(crd).group;
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of store.list(CRDS)) {
    if (other.metadata?.name === crd.metadata?.name || crdSpec(other).group !== group) continue;
    const names = acceptedNamesOf(other);
    for (const name of [names.plural, names.singular, ...names.shortNames]) resources.add(name);
    for (const kind of [names.kind, names.listKind]) kinds.add(kind);
  }
  return { resources, kinds };
}

const conflictOf = (requested: string, accepted: string, used: Set<string>): string | undefined =>
  requested === accepted || !used.has(requested) ? undefined : `"${requested}" is already in use`;

/** calculateNamesAndConditions: each requested name accepted unless another CRD of the group holds it. */
function acceptNames(store: ObjectStore, crd: KubeObject): { names: CrdNames; accepted: Condition } {
  const requested = crdSpec(crd).names;
  const accepted = acceptedNamesOf(crd);
  const { resources, kinds } = namesInUse(store, crd);
  const names: CrdNames = { ...accepted, categories: requested.categories };
  let problem: Condition | undefined;
  const take = (field: 'plural' | 'singular' | 'kind' | 'listKind', used: Set<string>, reason: string): void => {
    const conflict = conflictOf(requested[field], accepted[field], used);
    if (conflict) problem = { type: 'NamesAccepted', status: 'False', reason, message: conflict };
    else names[field] = requested[field];
  };
  take('plural', resources, 'PluralConflict');
  take('singular', resources, 'SingularConflict');
  if (!isDeepStrictEqual(requested.shortNames, accepted.shortNames)) {
    const conflicts = requested.shortNames.filter((s) => !accepted.shortNames.includes(s)).map((s) => conflictOf(s, '', resources)).filter((c) => c !== undefined);
    if (conflicts.length > 0) problem = { type: 'NamesAccepted', status: 'False', reason: 'ShortNamesConflict', message: conflicts.length === 1 ? conflicts[0] : `[${conflicts.join(', ')}]` };
    else names.shortNames = requested.shortNames;
  }
  take('kind', kinds, 'KindConflict');
  take('listKind', kinds, 'ListKindConflict');
  return { names, accepted: problem ?? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' } };
}

/** The accepted names as the status carries them: plural and kind always, the others when set. */
function namesJson(names: CrdNames): Record<string, unknown> {
  const json: Record<string, unknown> = { plural: names.plural };
  if (names.singular) json.singular = names.singular;
  if (names.shortNames.length > 0) json.shortNames = names.shortNames;
  json.kind = names.kind;
  if (names.listKind) json.listKind = names.listKind;
  if (names.categories.length > 0) json.categories = names.categories;
  return json;
}

export class CrdControllers {
  readonly #store: ObjectStore;
  readonly #finalizers: boolean;
  readonly #queued = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** When the finalizer started waiting for a CRD's objects to go. */
  readonly #waitingSince = new Map<string, number>();
  #unsubscribe: (() => void) | undefined;

  /** `finalizers`: objects keep their own finalizers while the CRD's finalizer deletes them. */
  constructor(store: ObjectStore, finalizers: boolean) {
    this.#store = store;
    this.#finalizers = finalizers;
  }

  start(): void {
    this.#unsubscribe = this.#store.subscribe((event) => {
      if (event.resource !== CRDS) return;
      if (event.type === 'DELETED') this.#requeueGroup(crdSpec(event.object).group);
      else this.#enqueue(event.object.metadata?.name ?? '');
    });
    for (const crd of this.#store.list(CRDS)) this.#enqueue(crd.metadata?.name ?? '');
  }

  stop(): void {
    this.#unsubscribe?.();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  #enqueue(name: string): void {
    if (this.#queued.has(name)) return;
    this.#queued.add(name);
    this.#later(0, () => {
      this.#queued.delete(name);
      this.#sync(name);
    });
  }

  /** A deleted CRD frees its names: the group's CRDs that conflicted may be accepted now. */
  #requeueGroup(group: string): void {
    for (const crd of this.#store.list(CRDS)) if (crdSpec(crd).group === group) this.#enqueue(crd.metadata?.name ?? '');
  }

  #sync(name: string): void {
    const crd = this.#store.get(CRDS, undefined, name);
    if (!crd) return;
    if (crd.metadata?.deletionTimestamp !== undefined && (crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return this.#finalize(crd);
    if (!isDeepStrictEqual(crdSpec(crd).names, acceptedNamesOf(crd))) return this.#name(crd);
    if (isConditionTrue(crd, 'NamesAccepted') && !isConditionTrue(crd, 'Established')) this.#establish(crd);
  }

  /** The naming controller's status write. */
  #name(crd: KubeObject): void {
    const { names, accepted } = acceptNames(this.#store, crd);
    const old = conditionOf(crd, 'NamesAccepted');
    if (isDeepStrictEqual(names, acceptedNamesOf(crd)) && old?.status === accepted.status && old.reason === accepted.reason && old.message === accepted.message) return;
    let established: Condition = conditionOf(crd, 'Established') ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
    if (established.status !== 'True' && accepted.status === 'True') {
      established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
    }
    let next = withCondition(crd, accepted);
    next = withCondition(next, established);
    next.status = { ...(isRecord(next.status) ? next.status : {}), acceptedNames: namesJson(names) };
    this.#store.update(CRDS, next);
    this.#requeueGroup(crdSpec(crd).group);
  }

  /** The establishing controller's status write. */
  #establish(crd: KubeObject): void {
    this.#store.update(CRDS, withCondition(crd, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }));
  }

  /** The CRD finalizer: Terminating, the objects deleted and awaited, then its finalizer removed. */
  #finalize(crd: KubeObject): void {
    const name = crd.metadata?.name ?? '';
    let next = withCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
    if (!isConditionTrue(crd, 'Terminating')) next = this.#store.update(CRDS, next);
    const key = name;
    if (!isConditionTrue(crd, 'Established') || !this.#store.types.has(key)) {
      return this.#release(withCondition(next, { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' }));
    }
    this.#deleteInstances(key);
    if (this.#store.list(key).length === 0) {
      this.#waitingSince.delete(name);
      return this.#release(withCondition(next, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }));
    }
    const since = this.#waitingSince.get(name) ?? Date.now();
    this.#waitingSince.set(name, since);
    if (Date.now() - since >= INSTANCE_WAIT_MS) {
      this.#waitingSince.delete(name);
      const message = 'could not confirm zero CustomResources remaining: timed out waiting for the condition';
      this.#store.update(CRDS, withCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionCheck', message }));
    }
    this.#later(INSTANCE_POLL_MS, () => this.#enqueue(name));
  }

  /** DeleteCollection in each namespace: objects with finalizers are marked, the others go. */
  #deleteInstances(key: string): void {
    for (const object of this.#store.list(key)) {
      const { namespace, name = '' } = object.metadata ?? {};
      if (this.#finalizers && (object.metadata?.finalizers ?? []).length > 0) {
        if (object.metadata?.deletionTimestamp === undefined) this.#store.markDeleting(key, namespace, name);
      } else this.#store.delete(key, namespace, name);
    }
  }

  /** The finalizer removed; with none left the CRD goes (and with it the type). */
  #release(crd: KubeObject): void {
    const next = clone(crd);
    const meta = next.metadata ?? {};
    meta.finalizers = (meta.finalizers ?? []).filter((finalizer) => finalizer !== CLEANUP_FINALIZER);
    if (meta.finalizers.length === 0) delete meta.finalizers;
    const stored = this.#store.update(CRDS, next);
    if ((stored.metadata?.finalizers ?? []).length === 0) this.#store.delete(CRDS, undefined, stored.metadata?.name ?? '');
  }
}
