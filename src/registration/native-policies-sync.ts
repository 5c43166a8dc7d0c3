import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { retryWithBackoff } from '../util/backoff.js';
import { canonicalJson } from '../util/canonical-json.js';
import { formatApiFailure, isNotFound } from '../kube/api-errors.js';
import { mergeForUpdate, metadataDiffers } from './configuration-diff.js';
import type { NativeKind, NativeObject, NativeObjectApi } from './native-policy-api.js';
import { NATIVE_CONFIGURATION_LABEL, type NativePolicyObjects } from './native-policy-objects.js';
import { writeRetry, type RegisterOutcome } from './register.js';
import { UNMANAGED_ANNOTATION } from './unmanaged.js';

export type NativeApis = Record<NativeKind, NativeObjectApi>;

export interface NativeSyncStep {
  kind: NativeKind;
  name: string;
  outcome: RegisterOutcome | 'deleted';
  /** The object as the API last returned it (read, or answered to the write): its status, for the caller. */
  live?: NativeObject;
}

export interface NativeSyncOptions {
  /** Only objects labelled with this configuration name are this install's (others are left alone). */
  configName: string;
  /** The kinds the cluster serves (default: all): a kind it does not serve is neither written nor listed. */
  kinds?: readonly NativeKind[];
  signal: AbortSignal;
  logger: Logger;
  maxAttempts?: number;
  /** The writes sent as dry runs and nothing deleted: what kube-apiserver would refuse, with nothing changed. */
  dryRun?: boolean;
}

/** What a native object holds besides its metadata: spec, or a ConfigMap's data. */
const content = (object: NativeObject): string => canonicalJson('spec' in object ? object.spec : (object as { data?: unknown }).data);
const unmanaged = (metadata: V1ObjectMeta | undefined): boolean => metadata?.annotations?.[UNMANAGED_ANNOTATION] === 'true';

/** Create-or-update of one object, as ensureConfiguration does for the webhook configurations. */
async function ensure(api: NativeObjectApi, desired: NativeObject, options: NativeSyncOptions): Promise<NativeSyncStep> {
  const name = desired.metadata?.name ?? '';
  const step = (outcome: RegisterOutcome, live?: NativeObject): NativeSyncStep => ({ kind: api.kind, name, outcome, ...(live ? { live } : {}) });
  return await retryWithBackoff(
    async () => {
      const actual = await api.read(name, options.signal);
      if (actual === undefined) return step('created', await api.create(desired, options.signal, options.dryRun));
      if (unmanaged(actual.metadata)) return step('unmanaged', actual);
      if (!metadataDiffers(desired.metadata, actual.metadata) && content(desired) === content(actual)) return step('unchanged', actual);
      return step('updated', await api.replace(mergeForUpdate(desired, actual), options.signal, options.dryRun));
    },
    writeRetry(options, (error, attempt, delayMs) => options.logger.warn({ [api.kind]: name, attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'native policy write failed; retrying')),
  );
}

/** Params before the policies that read them, policies before the bindings that enforce them. */
const ENSURE_ORDER: readonly NativeKind[] = ['params', 'policy', 'mutatingPolicy', 'binding', 'mutatingBinding'];

const ours = (configName: string) => (object: NativeObject): boolean => object.metadata?.labels?.[NATIVE_CONFIGURATION_LABEL] === configName;

/**
 * Brings this install's native objects to `desired`: params first, then policies, then bindings
 * (a binding whose params are not there yet would deny every matching write); then deletes, in
 * the reverse order, those of this install no longer desired (an entry removed or gone back to
 * the webhook). An object with the unmanaged annotation is left as it is. `phases` runs only one
 * half: the leader ensures before it writes the configurations and prunes after, so an entry
 * moving between the engines is enforced by one or the other throughout.
 */
export async function syncNativePolicies(
  apis: NativeApis,
  desired: readonly NativePolicyObjects[],
  options: NativeSyncOptions & { removeUnmanaged?: boolean; phases?: { ensure: boolean; prune: boolean } },
): Promise<NativeSyncStep[]> {
  const phases = options.phases ?? { ensure: true, prune: true };
  const steps: NativeSyncStep[] = [];
  const mutating = (o: NativeObject): boolean => o.kind?.startsWith('Mutating') === true;
  const wanted: Record<NativeKind, NativeObject[]> = {
    params: desired.flatMap((d) => (d.params ? [d.params] : [])),
    policy: desired.map((d) => d.policy).filter((o) => !mutating(o)),
    binding: desired.map((d) => d.binding).filter((o) => !mutating(o)),
    mutatingPolicy: desired.map((d) => d.policy).filter(mutating),
    mutatingBinding: desired.map((d) => d.binding).filter(mutating),
  };
  const served = (kind: NativeKind): boolean => options.kinds === undefined || options.kinds.includes(kind);
  for (const kind of phases.ensure ? ENSURE_ORDER.filter(served) : []) {
    steps.push(...(await Promise.all(wanted[kind].map((object) => ensure(apis[kind], object, options)))));
  }
  for (const kind of phases.prune ? [...ENSURE_ORDER].reverse().filter(served) : []) {
    const names = new Set(wanted[kind].map((o) => o.metadata?.name));
    // A 404 for the list: the cluster does not serve the kind, so it holds none of them.
    const listed = await apis[kind].listManaged(options.signal).catch((error: unknown) => (isNotFound(error) ? [] : Promise.reject(error)));
    const stale = listed.filter(ours(options.configName)).filter((o) => !names.has(o.metadata?.name));
    for (const object of options.dryRun ? [] : stale) {
      if (unmanaged(object.metadata) && !options.removeUnmanaged) continue;
      await apis[kind].delete(object.metadata?.name ?? '', options.signal);
      steps.push({ kind, name: object.metadata?.name ?? '', outcome: 'deleted' });
    }
  }
  // Unmanaged objects are reported by the caller when that changes, not at every pass.
  for (const { kind, name, outcome } of steps.filter((s) => !options.dryRun && s.outcome !== 'unchanged' && s.outcome !== 'unmanaged')) options.logger.info({ kind, object: name, outcome }, `native policy object ${outcome}`);
  return steps;
}

/**
 * Teardown: every object of this install, bindings first (so nothing is enforced
 * half-configured), the unmanaged ones included, as for the configurations.
 */
export async function deleteNativePolicies(apis: NativeApis, options: NativeSyncOptions): Promise<NativeSyncStep[]> {
  return await syncNativePolicies(apis, [], { ...options, removeUnmanaged: true });
}
