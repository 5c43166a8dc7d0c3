import type { Logger } from 'pino';
import { formatApiFailure, isForbidden, isNotFound, isRetryable } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { typeCheckStatus } from './native-policy-status.js';
import type { DesiredConfigurationInput } from './desired-configurations.js';
import { deleteNativePolicies, syncNativePolicies, type NativeApis, type NativeSyncStep } from './native-policies-sync.js';
import { nativeObjectApis } from './native-policy-api.js';
import { NATIVE_CONFIGURATION_LABEL, nativePolicyObjects, type NativePolicyObjects } from './native-policy-objects.js';
import { MUTATING_POLICY_GROUP_VERSION, readNativeSupport } from './native-support.js';
import type { NativeKind } from './native-policy-api.js';
import type { NativeRestoreKind, RegistrationMetrics } from './registration-metrics.js';
import type { ServerVersion } from '../kube/server-version.js';
import { decideEngines, type EngineDecisions, type NativeSupport } from '../policy/engine.js';
import type { PolicyEntry } from '../policy/policy.js';
import { retryWithBackoff } from '../util/backoff.js';
import { canonicalJson } from '../util/canonical-json.js';
import { PolicyFileError } from '../policy/policy-file.js';

export interface NativeRegistrationOptions {
  api: KubeApi;
  configName: string;
  namespace: string;
  entries: () => readonly PolicyEntry[];
  excludedNamespaces: () => readonly string[];
  owner: () => DesiredConfigurationInput['owner'];
  logger: Logger;
  metrics?: RegistrationMetrics;
}

/** A watch the reconciler keeps on this install's native objects. */
export interface NativeWatch {
  path: string;
  labelSelector: string;
  what: string;
}

/** Capped backoff for the discovery read at a term's start, as for the leader's other reads. */
const SUPPORT_BACKOFF = { initialMs: 200, maxMs: 5000 } as const;

/** The rights native entries need, and where an install gets them. */
export const NATIVE_GRANT =
  "the server's ServiceAccount needs create, list, watch and get, update, delete on validatingadmissionpolicies and validatingadmissionpolicybindings (admissionregistration.k8s.io; mutatingadmissionpolicies and mutatingadmissionpolicybindings for defaultLabels and defaultResources entries), and on configmaps in its namespace (the Helm chart grants them, by name, when an entry has engine native or auto; other installs: docs/native-policies.md, RBAC)";

const RESTORE_KIND: Record<NativeSyncStep['kind'], NativeRestoreKind> = {
  policy: 'native-policy',
  binding: 'native-binding',
  params: 'native-params',
  mutatingPolicy: 'native-mutating-policy',
  mutatingBinding: 'native-mutating-binding',
};

/** The kind of sync step an object of a native entry is. */
const stepKind = (object: { kind?: string }, role: 'policy' | 'binding' | 'params'): NativeKind =>
  role === 'params' ? 'params' : object.kind?.startsWith('Mutating') ? (role === 'policy' ? 'mutatingPolicy' : 'mutatingBinding') : role;

/**
 * The native side of registration: which entries kube-apiserver runs (decided at each leadership
 * term's start from discovery), their ValidatingAdmissionPolicies, bindings and params ConfigMaps
 * brought to the desired state around each write of the configurations, restores told from the
 * leader's own updates (the restores metric), and teardown beside the configurations.
 */
export class NativeRegistration {
  readonly #options: NativeRegistrationOptions;
  readonly #apis: NativeApis;
  /** undefined until a term read it: a follower (and a replica that never led) decides nothing native. */
  #support: NativeSupport | undefined;
  /** What each object was last written or seen as desired in this term (its canonical JSON): a write from the same desire is a restore. */
  readonly #settled = new Map<string, string>();
  #lastReported = '';
  /** This term wrote native objects: a policy that drops its last native entry still prunes them. */
  #wrote = false;
  /** Some term of this process created or updated a native object: a teardown of its own writes includes them. */
  #everWrote = false;
  /** Which kinds of policy this term wrote: their objects are still pruned when no entry asks for that kind any more. */
  readonly #wroteKinds = new Set<'validating' | 'mutating'>();
  /** The entries of the pass under way (freeze): its configurations, ensure and prune agree even when a reload lands meanwhile. */
  #frozen: readonly PolicyEntry[] | undefined;
  /** Objects last seen with the unmanaged annotation (logged when that changes). */
  readonly #unmanaged = new Set<string>();
  /** The status last logged per policy, so a status is logged once, not at every pass. */
  readonly #statusSeen = new Map<string, string>();

  constructor(options: NativeRegistrationOptions) {
    this.#options = options;
    this.#apis = nativeObjectApis(options.api, options.namespace);
  }

  /**
   * A term starts: discovery says whether the cluster serves ValidatingAdmissionPolicy v1 (read
   * again at each term: a control-plane upgrade may have added it). `starting`: the process's first
   * registration, which an entry asking for `native` on a cluster without the API fails (exit 2);
   * in a later term it is logged as an error and its entry is registered nowhere.
   */
  async startTerm(signal: AbortSignal, starting: boolean, version: ServerVersion | undefined): Promise<void> {
    this.#settled.clear();
    this.#wrote = false;
    this.#wroteKinds.clear();
    this.#frozen = undefined;
    this.#support = await retryWithBackoff(() => readNativeSupport(this.#options.api.kubeConfig, signal, version), {
      ...SUPPORT_BACKOFF,
      maxAttempts: Number.POSITIVE_INFINITY,
      signal,
      retryable: (error) => !starting || isRetryable(error),
      onRetry: (error, attempt, delayMs) => this.#options.logger.warn({ attempt: attempt + 1, delayMs, error: formatApiFailure(error) }, 'reading API discovery for ValidatingAdmissionPolicy failed; retrying'),
    });
    const { validatingPolicies, why, mutatingPolicies, mutatingWhy } = this.#support;
    this.#options.logger.info(
      { validatingAdmissionPolicy: validatingPolicies, ...(why ? { why } : {}), mutatingAdmissionPolicy: mutatingPolicies === true, ...(mutatingWhy ? { mutatingWhy } : {}) },
      'native policy support',
    );
    const refused = this.decisions().refused;
    if (refused.length > 0 && starting) {
      throw new PolicyFileError(refused.map((r) => `entry ${r.entry}: engine: native cannot run on this cluster: ${r.why}; use engine: auto to fall back to the webhook, or engine: webhook`));
    }
  }

  /**
   * The start's check, by every replica before anything is written: discovery read as a term's
   * start reads it (a native entry the cluster cannot run refuses the start), then the writes a
   * first registration would send, as dry runs, and the lists its prune would read: a missing
   * right fails the start here rather than after the Lease and the first objects were written.
   */
  async check(signal: AbortSignal, version: ServerVersion | undefined): Promise<void> {
    await this.startTerm(signal, true, version);
    if (this.#kinds().length === 0 || !this.#mayGoNative()) return;
    const options = { configName: this.#options.configName, kinds: this.#kinds(), signal, logger: this.#options.logger, maxAttempts: Number.POSITIVE_INFINITY, dryRun: true };
    await syncNativePolicies(this.#apis, this.desired(), options).catch((error: unknown) => this.#refused(error));
  }

  /** A term of this process created or updated some native object. */
  get wroteAny(): boolean {
    return this.#everWrote;
  }

  /**
   * Some entry asks for native or auto: only then does the leader list, write or watch native
   * objects (and need the RBAC for them). A process whose policy never had one therefore leaves
   * alone objects an earlier process registered (docs/native-policies.md: moving back).
   */
  #mayGoNative(): boolean {
    return this.#entries().some((entry) => (entry.engine ?? 'webhook') !== 'webhook');
  }


  /**
   * A pass starts from the policy in force now: until the next freeze, the configurations left
   * out, the objects ensured and the ones pruned all follow these entries (a policy reloaded in
   * the middle of a pass is the next pass's, which it triggers).
   */
  freeze(): void {
    this.#frozen = this.#options.entries();
  }

  #entries(): readonly PolicyEntry[] {
    return this.#frozen ?? this.#options.entries();
  }

  /** The entries as this term's cluster runs them; fallbacks and refusals logged whenever they change. */
  decisions(): EngineDecisions {
    const decisions = decideEngines(this.#entries(), this.#support ?? { validatingPolicies: false, why: 'not read yet' });
    if (this.#support === undefined) return { ...decisions, native: [], refused: [] };
    const report = JSON.stringify([decisions.fellBack, decisions.refused, decisions.native.map((e) => e.spec.name)]);
    if (report !== this.#lastReported) {
      this.#lastReported = report;
      for (const { entry, why } of decisions.fellBack) this.#options.logger.info({ entry, why }, 'engine auto: the webhook runs this entry');
      for (const { entry, why } of decisions.refused) this.#options.logger.error({ entry, why }, 'engine native: this cluster cannot run the entry; nothing enforces it');
      if (decisions.native.length > 0) this.#options.logger.info({ entries: decisions.native.map((e) => e.spec.name) }, 'these entries run inside kube-apiserver as Validating or MutatingAdmissionPolicies');
    }
    return decisions;
  }

  /** Entries the configurations leave out: those run natively, and `native` ones the cluster cannot run. */
  leaveOut(): ReadonlySet<string> {
    const { native, refused } = this.decisions();
    return new Set([...native.map((e) => e.spec.name), ...refused.map((r) => r.entry)]);
  }

  desired(): NativePolicyObjects[] {
    const owner = this.#options.owner();
    const input = { configName: this.#options.configName, namespace: this.#options.namespace, excludedNamespaces: this.#options.excludedNamespaces(), ...(owner ? { owner } : {}) };
    return this.decisions().native.map((entry) => nativePolicyObjects(entry, input));
  }

  /** Before the configurations are written: the native objects created or brought up to date. */
  async ensure(signal: AbortSignal, maxAttempts: number): Promise<void> {
    if (this.#kinds().length === 0 || !this.#mayGoNative()) return;
    this.#wrote = true;
    for (const kind of this.#kinds()) this.#wroteKinds.add(kind.startsWith('mutating') ? 'mutating' : 'validating');
    const desired = this.desired();
    const steps = await syncNativePolicies(this.#apis, desired, { configName: this.#options.configName, kinds: this.#kinds(), signal, logger: this.#options.logger, maxAttempts, phases: { ensure: true, prune: false } }).catch(
      (error: unknown) => {
        // Some objects may have been written before the one that failed.
        this.#everWrote = true;
        return this.#refused(error);
      },
    );
    if (steps.some((step) => step.outcome === 'created' || step.outcome === 'updated')) this.#everWrote = true;
    this.#track(desired, steps);
    this.#readStatus(steps);
  }

  /**
   * kube-apiserver type-checks a policy after each write (kube-controller-manager writes
   * status.typeChecking for the generation it checked, and a watch event brings the leader back):
   * each policy's warnings and conditions for its current generation are logged when they change,
   * and the warnings counted in kube_admission_native_policy_type_warnings{policy}.
   */
  #readStatus(steps: readonly NativeSyncStep[]): void {
    for (const step of steps) {
      if (step.kind !== 'policy' || !step.live) continue;
      const status = typeCheckStatus(step.live);
      if (!status) continue;
      const { warnings, conditions, failingConditions: notTrue } = status;
      this.#options.metrics?.setTypeCheckWarnings(step.name, warnings.length);
      const seen = JSON.stringify([status.generation, warnings, conditions]);
      if (this.#statusSeen.get(step.name) === seen) continue;
      this.#statusSeen.set(step.name, seen);
      if (warnings.length > 0) this.#options.logger.warn({ policy: step.name, generation: status.generation, warnings }, 'kube-apiserver type-checked the native policy with warnings: an expression may not work on the matched kinds');
      if (notTrue.length > 0) this.#options.logger.warn({ policy: step.name, conditions: notTrue }, 'native policy conditions');
      if (warnings.length === 0 && notTrue.length === 0) this.#options.logger.info({ policy: step.name, generation: status.generation }, 'kube-apiserver type-checked the native policy: no warnings');
    }
  }

  /** After the configurations are written: this install's native objects no longer desired are deleted. */
  async prune(signal: AbortSignal, maxAttempts: number): Promise<void> {
    if (this.#kinds().length === 0 || !(this.#wrote || this.#mayGoNative())) return;
    await syncNativePolicies(this.#apis, this.desired(), { configName: this.#options.configName, kinds: this.#kinds(), signal, logger: this.#options.logger, maxAttempts, phases: { ensure: false, prune: true } }).catch(
      (error: unknown) => this.#refused(error),
    );
  }

  /** A 403 names the grant (the error itself goes on unchanged: the reconciler tells revoked rights by it). */
  #refused(error: unknown): never {
    if (isForbidden(error)) this.#options.logger.error({ error: formatApiFailure(error), grant: NATIVE_GRANT }, 'no right to the native policy objects');
    throw error;
  }

  /** What the reconciler watches besides the configurations (nothing where the API is not served). */
  watches(): NativeWatch[] {
    if (this.#kinds().length === 0 || !this.#mayGoNative()) return [];
    const labelSelector = `${NATIVE_CONFIGURATION_LABEL}=${this.#options.configName}`;
    return [
      ...(this.#kinds().includes('policy')
        ? [
            { path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', labelSelector, what: 'ValidatingAdmissionPolicies' },
            { path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', labelSelector, what: 'ValidatingAdmissionPolicyBindings' },
            { path: `/api/v1/namespaces/${this.#options.namespace}/configmaps`, labelSelector, what: 'native params ConfigMaps' },
          ]
        : []),
      ...(this.#kinds().includes('mutatingPolicy')
        ? [
            { path: `/apis/${MUTATING_POLICY_GROUP_VERSION}/mutatingadmissionpolicies`, labelSelector, what: 'MutatingAdmissionPolicies' },
            { path: `/apis/${MUTATING_POLICY_GROUP_VERSION}/mutatingadmissionpolicybindings`, labelSelector, what: 'MutatingAdmissionPolicyBindings' },
          ]
        : []),
    ];
  }

  /**
   * The kinds of native object the leader reads and writes: those the cluster serves (none until a
   * term read discovery) and some entry asks for (or this term wrote), the rights the install
   * grants being for those only (a policy without defaultLabels entries has none on MAPs).
   */
  #kinds(ignoreSupport = false): NativeKind[] {
    const asks = (mutating: boolean): boolean =>
      this.#wroteKinds.has(mutating ? 'mutating' : 'validating') || this.#entries().some((entry) => (entry.engine ?? 'webhook') !== 'webhook' && Boolean(entry.nativeMutation) === mutating);
    return [
      ...((ignoreSupport || this.#support?.validatingPolicies) && asks(false) ? (['params', 'policy', 'binding'] as const) : []),
      ...((ignoreSupport || this.#support?.mutatingPolicies) && asks(true) ? (['mutatingPolicy', 'mutatingBinding'] as const) : []),
    ];
  }

  /** A term ended: what another leader writes meanwhile is no restore. */
  endTerm(): void {
    this.#settled.clear();
  }

  /**
   * Teardown, beside the configurations' deletion: every native object of this install, bindings
   * first. A cluster that does not serve the API has none; after an uninstall removed the RBAC,
   * the garbage collector deletes them through their ownerReference.
   */
  async teardown(signal: AbortSignal, uninstalling: boolean): Promise<{ outcome: 'deleted' | 'absent' | 'forbidden' | 'failed'; detail: string }> {
    if (this.#support && this.#kinds().length === 0) return { outcome: 'absent', detail: 'native policies: none that the cluster serves and an entry asks for' };
    // An install whose entries all run in the webhook has no RBAC for them (nor objects, once its leader pruned).
    if (!this.#mayGoNative() && !this.#wrote) return { outcome: 'absent', detail: 'native policies: no entry runs natively' };
    try {
      // Before a term read discovery (a follower's teardown): the kinds the entries ask for; one the cluster does not serve lists nothing (404).
      const steps = await deleteNativePolicies(this.#apis, { configName: this.#options.configName, kinds: this.#kinds(this.#support === undefined), signal, logger: this.#options.logger, maxAttempts: 3 });
      return { outcome: steps.length > 0 ? 'deleted' : 'absent', detail: `native policy objects deleted: ${steps.length}` };
    } catch (error) {
      if (isNotFound(error)) return { outcome: 'absent', detail: 'native policies: the cluster serves none' };
      if (uninstalling && isForbidden(error)) return { outcome: 'forbidden', detail: 'native policy objects: no right any more; the garbage collector deletes them' };
      this.#options.logger.error({ error: formatApiFailure(error) }, 'deleting the native policy objects did not succeed');
      return { outcome: 'failed', detail: `native policy objects: ${formatApiFailure(error)}` };
    }
  }

  /** Created or updated from the same desire it was last settled at: someone else deleted or changed it. */
  #track(desired: readonly NativePolicyObjects[], steps: readonly NativeSyncStep[]): void {
    const wanted = new Map<string, string>();
    for (const objects of desired) {
      wanted.set(`${stepKind(objects.policy, 'policy')}/${objects.policy.metadata?.name}`, canonicalJson(objects.policy));
      wanted.set(`${stepKind(objects.binding, 'binding')}/${objects.binding.metadata?.name}`, canonicalJson(objects.binding));
      if (objects.params) wanted.set(`params/${objects.params.metadata?.name}`, canonicalJson(objects.params));
    }
    for (const step of steps) {
      const key = `${step.kind}/${step.name}`;
      const now = wanted.get(key);
      if (now === undefined) continue;
      if ((step.outcome === 'unmanaged') !== this.#unmanaged.has(key)) {
        if (step.outcome === 'unmanaged') this.#unmanaged.add(key);
        else this.#unmanaged.delete(key);
        const annotation = 'kube-admission-server.io/unmanaged';
        if (step.outcome === 'unmanaged') this.#options.logger.warn({ kind: step.kind, object: step.name, annotation: `${annotation}=true` }, 'native policy object marked unmanaged: left alone until the annotation is removed');
        else this.#options.logger.info({ kind: step.kind, object: step.name, annotation }, 'native policy object managed again: the annotation is gone');
      }
      if (step.outcome === 'unmanaged') continue;
      if ((step.outcome === 'created' || step.outcome === 'updated') && this.#settled.get(key) === now) {
        this.#options.metrics?.restored(RESTORE_KIND[step.kind]);
        this.#options.logger.warn({ kind: step.kind, object: step.name }, step.outcome === 'created' ? 'native policy object restored: it was deleted' : 'native policy object restored: it was changed by someone else');
      }
      this.#settled.set(key, now);
    }
  }
}
