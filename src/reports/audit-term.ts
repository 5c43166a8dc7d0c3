import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject, Webhook } from '../admission/types.js';
import { createKubeApi } from '../kube/client.js';
import { discoverResources, type DiscoveredResource } from '../kube/discovery.js';
import { StoredObjectEvaluation } from '../kube/evaluation/evaluate-objects.js';
import type { RunHandler } from '../kube/evaluation/simulate.js';
import { NamespaceCache } from '../kube/namespace-cache.js';
import { OwnerClusterRole } from '../registration/owner.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import type { PolicyEntry } from '../policy/policy.js';
import { sleep, withTimeout } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import type { PendingTrigger } from '../util/pending-trigger.js';
import { AuditQueue } from './audit-queue.js';
import { identityOf, keptKindOf, kindOf } from './audit-results.js';
import { encodeResults, KeptObjects, RuleTable, type KeptKind, type KeptObject } from './kept-objects.js';
import { KindAudit } from './kind-audit.js';
import { Pace, type PaceOptions } from './pace.js';
import type { ReportApi } from './report-api.js';
import { reportClient } from './report-client.js';
import { reportKindsServed } from './report-crds.js';
import type { ReportMetrics } from './report-metrics.js';
import { INSTALL_LABEL, reportsOf, type ReportObject, type ReportOwner } from './report-objects.js';
import { ReportSync } from './report-sync.js';
import { ReportWriter } from './report-writer.js';
import { reportedRules, reportedWebhooks } from './reported-rules.js';
import { resultsOf, type ReportedRule } from './results.js';
import { auditTargets, groupWanted } from './targets.js';
import { ViolationEvents } from './violation-events.js';
import { WriteRate } from './write-rate.js';

/** The policy the audit judges with, as it is now. */
export interface AuditPolicy {
  entries: readonly PolicyEntry[];
  /** Every webhook in the order kube-apiserver would call them: the policy's entries, then the custom ones. */
  webhooks: readonly Webhook[];
  /** The server's own namespace and the policy's excludedNamespaces. */
  excludedNamespaces: readonly string[];
}

/** The knobs of the audit's pace and writes (the defaults suit production; tests and benches shorten them). */
export interface AuditTuning {
  pace: PaceOptions;
  /** Changes gather this long before a namespace's reports are written. */
  coalesceMs: number;
  writesPerSecond: number;
  writeBurst: number;
  pageSize: number;
  /** How often a missing report API and the owner ClusterRole are looked at again. */
  recheckMs: number;
}

export const DEFAULT_TUNING: AuditTuning = { pace: { sliceMs: 10, share: 0.5 }, coalesceMs: 1000, writesPerSecond: 20, writeBurst: 40, pageSize: 100, recheckMs: 60_000 };

export interface AuditTermOptions {
  /** The audit's own connections (its own pool: its lists and writes never queue admission's calls). */
  kubeConfig: KubeConfig;
  /** objects: reports (metrics and logs only while their CRDs are missing); metrics: the gauge and logs only. */
  mode: 'metrics' | 'objects';
  api: ReportApi;
  /** The install's name: its reports' names and label. */
  install: string;
  maxBytes: number;
  events: boolean;
  /** This pod, which sends the Events. */
  instance: string;
  /** The ClusterRole that owns the install: the reports name it, so that uninstalling removes them. */
  ownerClusterRole: string | undefined;
  /** The policy as it is now (read at each term start and after each change). */
  policy: () => AuditPolicy;
  /** The server's handler run: the audit decides as admission does. */
  run: RunHandler;
  metrics: ReportMetrics;
  logger: Logger;
  tuning: AuditTuning;
}

/** The report groups are the audit's own output: never audited, whatever a wildcard rule says. */
const OWN_GROUPS = new Set(['openreports.io', 'wgpolicyk8s.io']);
const LIST_TIMEOUT_MS = 30_000;
const SYNC_WAIT_MS = 30_000;
const RETRY = { initialMs: 500, maxMs: 30_000 };

/** Tells webhooks apart across policy versions: an entry by its digest, a custom webhook by identity. */
const customIds = new WeakMap<Webhook, number>();
let nextCustomId = 0;

function identities(policy: AuditPolicy): Map<string, string> {
  const digests = new Map(policy.entries.map((entry) => [entry.spec.name, entry.digest]));
  return new Map(
    policy.webhooks.map((webhook) => {
      let id = digests.get(webhook.name);
      if (id === undefined) {
        if (!customIds.has(webhook)) customIds.set(webhook, nextCustomId++);
        id = `custom ${customIds.get(webhook)}`;
      }
      return [`${webhook.type}/${webhook.name}`, id];
    }),
  );
}

/** The policy version a term judges with. */
interface Judging {
  policy: AuditPolicy;
  reported: Map<string, ReportedRule>;
  evaluation: StoredObjectEvaluation;
  ids: Map<string, string>;
}

/**
 * One term of leadership of the background audit: the Namespaces cached, the reported kinds
 * listed and watched, every object judged at low priority and its results kept; reports written
 * (coalesced, rate limited, none while the first scan runs) or, without report objects, the
 * gauge and the logs only. A policy change judges again what it touches. Ends with `signal`.
 */
export class AuditTerm {
  readonly #options: AuditTermOptions;
  readonly #signal: AbortSignal;
  readonly #logger: Logger;
  readonly #rules = new RuleTable();
  readonly #kept: KeptObjects;
  readonly #queue: AuditQueue;
  readonly #pace: Pace;
  readonly #kinds = new Map<string, KindAudit>();
  readonly #keptKinds = new Map<string, KeptKind>();
  readonly #namespaces: NamespaceCache;
  #judging: Judging | undefined;
  #sync: ReportSync | undefined;
  #writer: ReportWriter | undefined;
  #owner: ReportOwner | undefined;
  #events: ViolationEvents | undefined;
  #scanned = false;

  constructor(options: AuditTermOptions, signal: AbortSignal) {
    this.#options = options;
    this.#signal = signal;
    this.#logger = options.logger;
    this.#kept = new KeptObjects((before, after) => this.#changed(before, after));
    this.#pace = new Pace(options.tuning.pace);
    this.#queue = new AuditQueue(this.#pace, (error) => this.#logger.error({ error: String(error) }, 'an audit job failed'));
    this.#namespaces = new NamespaceCache({ kubeConfig: options.kubeConfig, logger: this.#logger, onChange: (name) => this.#namespaceChanged(name) });
  }

  async run(policyChanged: PendingTrigger): Promise<void> {
    const signal = this.#signal;
    const started = performance.now();
    const loops = [this.#queue.run(signal)];
    try {
      this.#namespaces.start(signal);
      await this.#namespacesSynced();
      const objects = this.#options.mode === 'objects' && (await this.#reportsServed());
      if (objects) loops.push((await this.#prepareWriting()).run(signal));
      await this.#apply(true);
      await Promise.all([...this.#kinds.values()].map((kind) => kind.listed));
      this.#scanned = true;
      this.#logger.info({ objects: this.#kept.size, kinds: [...this.#kinds.values()].map((k) => k.target.kind), ms: Math.round(performance.now() - started) }, 'background audit: first scan complete');
      if (this.#sync) loops.push(this.#firstReportSet(started));
      else if (this.#options.mode === 'objects') loops.push(this.#waitForReportApi());
      await this.#follow(policyChanged);
    } catch (error) {
      if (!signal.aborted) throw error;
    } finally {
      await Promise.all([...this.#kinds.values()].map((kind) => kind.stop()));
      await this.#namespaces.stop();
      await Promise.all(loops);
      this.#options.metrics.reset();
    }
  }

  /** Policy changes and the owner's uid, until the term ends. */
  async #follow(policyChanged: PendingTrigger): Promise<void> {
    while (!this.#signal.aborted) {
      await policyChanged.take(this.#options.tuning.recheckMs, this.#signal);
      if (this.#signal.aborted) return;
      await this.#apply(false);
      await this.#refreshOwner();
    }
  }

  async #namespacesSynced(): Promise<void> {
    for (;;) {
      try {
        await withTimeout(SYNC_WAIT_MS, this.#signal, (bounded) => this.#namespaces.waitForSync(bounded));
        return;
      } catch (error) {
        if (this.#signal.aborted) throw error;
        this.#logger.warn({ error: this.#namespaces.lastError ?? 'no answer', waitedMs: SYNC_WAIT_MS }, 'background audit: the Namespaces are not listed yet (the ServiceAccount needs list and watch on namespaces); waiting');
      }
    }
  }

  /** Whether the report kinds are served; said once when they are not. */
  async #reportsServed(): Promise<boolean> {
    const served = await this.#retrying('reading the report API discovery', (signal) => reportKindsServed(this.#options.kubeConfig, this.#options.api, signal));
    if (!served) {
      this.#logger.warn(
        { api: this.#options.api.apiVersion, kinds: [this.#options.api.namespaced.kind, this.#options.api.cluster.kind] },
        'the report CustomResourceDefinitions are not installed: reporting through metrics and logs only (the chart installs them with reports.installCRDs); looking again every minute',
      );
    }
    return served;
  }

  /** While the report kinds are missing: looks again; once they are served, writes. */
  async #waitForReportApi(): Promise<void> {
    while (!this.#signal.aborted) {
      await sleep(this.#options.tuning.recheckMs, this.#signal).catch(() => undefined);
      if (this.#signal.aborted) return;
      const served = await reportKindsServed(this.#options.kubeConfig, this.#options.api, this.#signal).catch(() => false);
      if (!served) continue;
      this.#logger.info({ api: this.#options.api.apiVersion }, 'the report CustomResourceDefinitions are installed now: writing reports');
      const writing = (await this.#prepareWriting()).run(this.#signal);
      await this.#firstReportSet(performance.now());
      await writing;
      return;
    }
  }

  /** The writer, having read what the install has stored (a new leader resumes from it), and the sync that writes through it. */
  async #prepareWriting(): Promise<ReportSync> {
    const { kubeConfig, api, install, tuning } = this.#options;
    const writer = new ReportWriter(reportClient(kubeConfig, api), new WriteRate(tuning.writesPerSecond, tuning.writeBurst), { written: (verb) => this.#options.metrics.written(verb) }, this.#logger);
    await this.#refreshOwner();
    await this.#retrying('reading the reports stored', (signal) => writer.readExisting(`${INSTALL_LABEL}=${install}`, signal));
    this.#writer = writer;
    const sync = new ReportSync({
      build: (namespace, signal) => this.#pace.run(() => this.#build(namespace), signal),
      sync: async (namespace, desired, signal) => {
        const writes = await writer.sync(namespace, desired, signal);
        this.#options.metrics.setReports(writer.size);
        return writes;
      },
      logger: this.#logger,
      coalesceMs: tuning.coalesceMs,
    });
    this.#sync = sync;
    this.#options.metrics.setReports(writer.size);
    return sync;
  }

  /** Once the scan is in: every namespace with results or reports written, then said with its figures. */
  async #firstReportSet(started: number): Promise<void> {
    const sync = this.#sync;
    const writer = this.#writer;
    if (!sync || !writer) return;
    for (const namespace of new Set([...this.#kept.namespaces(), ...writer.namespaces()])) sync.markDirty(namespace);
    sync.release();
    try {
      await sync.whenClean(this.#signal);
      this.#logger.info({ reports: writer.size, writes: sync.writes, objects: this.#kept.size, ms: Math.round(performance.now() - started) }, 'background audit: first complete report set written');
    } catch {
      // The term ended first.
    }
  }

  #build(namespace: string): ReportObject[] {
    const judging = this.#judging;
    if (!judging) return [];
    const shape = { api: this.#options.api, install: this.#options.install, maxBytes: this.#options.maxBytes, rules: this.#rules, reported: judging.reported, ...(this.#owner ? { owner: this.#owner } : {}) };
    const { reports, oversized } = reportsOf(namespace, this.#kept.objectsIn(namespace), shape);
    for (const { object, bytes } of oversized) {
      this.#logger.error({ object: `${object.kind.kind} ${namespace ? `${namespace}/` : ''}${object.name}`, bytes, limit: this.#options.maxBytes }, 'the results of one object exceed --reports-max-bytes: left out of the reports');
    }
    return reports;
  }

  async #refreshOwner(): Promise<void> {
    const name = this.#options.ownerClusterRole;
    if (!name) return;
    const ref = await new OwnerClusterRole(createKubeApi(this.#options.kubeConfig), name, this.#logger).refresh(this.#signal);
    const owner = ref.uid ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name, uid: ref.uid } : undefined;
    if (owner?.uid === this.#owner?.uid) return;
    this.#owner = owner;
    // Every report names its owner: a new uid (a force-replaced ClusterRole) rewrites them all.
    if (this.#scanned && this.#sync) for (const namespace of new Set([...this.#kept.namespaces(), ...(this.#writer?.namespaces() ?? [])])) this.#sync.markDirty(namespace);
  }

  /** A new policy version (or the first): what to judge with, which kinds to list, what to judge again. */
  async #apply(first: boolean): Promise<void> {
    const policy = this.#options.policy();
    const before = this.#judging;
    const reported = reportedRules(policy.entries, policy.webhooks);
    const ids = identities(policy);
    // The same policy (a periodic look): only what discovery shows new or gone is listed or dropped.
    const same = !first && before !== undefined && sameJudging(before, policy, ids);
    if (!same) {
      const judged = policy.webhooks.filter((webhook) => webhook.type === 'mutating' || reported.has(webhook.name));
      const evaluation = new StoredObjectEvaluation(judged, { run: this.#options.run, excludedNamespaces: policy.excludedNamespaces, namespaces: this.#namespaces });
      this.#judging = { policy, reported, evaluation, ids };
    }
    const targets = await this.#discover(reportedWebhooks(policy.webhooks, reported));
    const touched = before && !same ? touchedWebhooks(before, policy, ids) : undefined;
    const gone = before && !same ? [...before.reported.keys()].filter((name) => !reported.has(name)) : [];
    for (const namespace of this.#kept.dropRules(new Set(gone.map((name) => this.#rules.indexOf(name))))) this.#sync?.markDirty(namespace);
    const relist = same ? new Set<string>() : touched && !touched.all ? await this.#relistKeys(touched.webhooks, before!, targets) : undefined;
    const wanted = new Map(targets.map((target) => [keptKindOf(target).key, target]));
    for (const [key, kind] of [...this.#kinds]) {
      if (wanted.has(key) && wanted.get(key)!.apiVersion === kind.target.apiVersion && relist && !relist.has(key)) continue;
      await kind.stop();
      this.#kinds.delete(key);
      if (!wanted.has(key)) for (const namespace of this.#kept.deleteWhere((object) => object.kind.key === key)) this.#sync?.markDirty(namespace);
      // Listed again below: every object judged anew, whatever its resourceVersion.
      else this.#kept.staleKind(key);
    }
    for (const [key, target] of wanted) {
      if (this.#kinds.has(key)) continue;
      const kind = new KindAudit(target, this.#keptKind(target), {
        kubeConfig: this.#options.kubeConfig,
        queue: this.#queue,
        kept: this.#kept,
        judge: (audit, object, force) => this.#judge(audit, object, force),
        swept: (namespaces) => namespaces.forEach((namespace) => this.#sync?.markDirty(namespace)),
        pageSize: this.#options.tuning.pageSize,
        timeoutMs: LIST_TIMEOUT_MS,
        logger: this.#logger,
      });
      this.#kinds.set(key, kind);
      kind.start(this.#signal);
    }
    if (!first && !same) {
      this.#logger.info({ rules: [...reported.keys()], relisted: [...this.#kinds.values()].filter((k) => !relist || relist.has(k.kind.key)).map((k) => k.target.kind), dropped: gone }, 'background audit: the policy changed; judging again what it touches');
      // Severity or category may have changed: every report is built again (written only where it differs).
      if (this.#sync) for (const namespace of new Set([...this.#kept.namespaces(), ...(this.#writer?.namespaces() ?? [])])) this.#sync.markDirty(namespace);
    }
  }

  /** The kinds matched, before or now, by webhooks the change touched. */
  async #relistKeys(webhooks: readonly Webhook[], before: Judging, targets: readonly DiscoveredResource[]): Promise<Set<string>> {
    const names = new Set(webhooks.map((w) => w.name));
    const old = before.policy.webhooks.filter((w) => names.has(w.name) && w.type === 'validating');
    const now = webhooks.filter((w) => w.type === 'validating');
    const keys = new Set<string>();
    for (const target of [...auditTargets(targets, now), ...(old.length > 0 ? await this.#discover(old) : [])]) keys.add(keptKindOf(target).key);
    return keys;
  }

  async #discover(webhooks: readonly Webhook[]): Promise<DiscoveredResource[]> {
    if (webhooks.length === 0) return [];
    const resources = await this.#retrying('reading the API discovery', (signal) =>
      discoverResources(this.#options.kubeConfig, { timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS, signal, wantGroup: (group) => !OWN_GROUPS.has(group) && groupWanted(webhooks)(group) }),
    );
    return auditTargets(resources, webhooks);
  }

  #keptKind(target: DiscoveredResource): KeptKind {
    const kind = keptKindOf(target);
    const kept = this.#keptKinds.get(kind.key);
    if (kept && kept.apiVersion === kind.apiVersion) return kept;
    this.#keptKinds.set(kind.key, kind);
    return kind;
  }

  /** One object judged with the policy in force now (unless kept at this resourceVersion and nothing forces it). */
  async #judge(audit: KindAudit, object: KubeObject, force: boolean): Promise<void> {
    const identity = identityOf(object);
    const judging = this.#judging;
    if (!identity || !judging) return;
    const kept = this.#kept.get(identity.namespace, identity.uid);
    if (!force && kept && kept.resourceVersion === identity.resourceVersion && kept.kind === audit.kind) {
      this.#kept.touch(identity.namespace, identity.uid);
      return;
    }
    // Judged again when the policy changed while it was judged (an asynchronous handler).
    for (let current = judging; ; current = this.#judging!) {
      let outcome;
      try {
        outcome = await current.evaluation.evaluate(object, kindOf(audit.target));
      } catch (error) {
        this.#logger.warn({ object: `${audit.target.kind} ${identity.namespace ? `${identity.namespace}/` : ''}${identity.name}`, error: error instanceof Error ? error.message : String(error) }, 'background audit: an object could not be judged');
        return;
      }
      this.#options.metrics.evaluated();
      if (this.#judging !== current) continue;
      this.#kept.set(audit.kind, identity, encodeResults(resultsOf(outcome, current.reported), this.#rules));
      return;
    }
  }

  #changed(before: KeptObject | undefined, after: KeptObject | undefined): void {
    this.#options.metrics.changed(this.#rules, before, after);
    if (this.#scanned && this.#options.events) {
      this.#events ??= new ViolationEvents({ kubeConfig: this.#options.kubeConfig, instance: this.#options.instance, rules: this.#rules, metrics: this.#options.metrics, logger: this.#logger, signal: this.#signal });
      this.#events.changed(before, after);
    }
    this.#sync?.markDirty((after ?? before)!.namespace);
  }

  #namespaceChanged(name: string): void {
    for (const kind of this.#kinds.values()) {
      kind.relistNamespace(name, this.#signal).catch((error: unknown) => {
        if (!this.#signal.aborted) this.#logger.warn({ namespace: name, resource: kind.target.path, error: error instanceof Error ? error.message : String(error) }, 'background audit: listing a changed namespace failed; its objects are judged again at their next change');
      });
    }
  }

  /** `call` until it succeeds or the term ends, with capped backoff. */
  async #retrying<T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call(this.#signal);
      } catch (error) {
        if (this.#signal.aborted) throw error;
        const delayMs = backoffDelay(attempt, RETRY);
        this.#logger.warn({ error: error instanceof Error ? error.message : String(error), retryInMs: delayMs }, `background audit: ${what} failed; retrying`);
        await sleep(delayMs, this.#signal);
      }
    }
  }
}

/** Nothing the audit judges with changed (the file was rewritten as it was, or an entry the audit ignores... none). */
function sameJudging(before: Judging, policy: AuditPolicy, ids: Map<string, string>): boolean {
  if (before.policy.excludedNamespaces.join() !== policy.excludedNamespaces.join()) return false;
  if (before.ids.size !== ids.size) return false;
  for (const [key, id] of ids) if (before.ids.get(key) !== id) return false;
  return true;
}

/** The webhooks a change touched: every one when the excluded namespaces or a mutating webhook changed (mutations feed every rule). */
function touchedWebhooks(before: Judging, policy: AuditPolicy, ids: Map<string, string>): { all: boolean; webhooks: Webhook[] } {
  const changed = policy.webhooks.filter((webhook) => before.ids.get(`${webhook.type}/${webhook.name}`) !== ids.get(`${webhook.type}/${webhook.name}`));
  const removedMutating = [...before.ids.keys()].some((key) => key.startsWith('mutating/') && !ids.has(key));
  const all = before.policy.excludedNamespaces.join() !== policy.excludedNamespaces.join() || removedMutating || changed.some((webhook) => webhook.type === 'mutating');
  return { all, webhooks: changed };
}
