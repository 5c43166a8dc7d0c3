import { Counter, Gauge, type Registry } from 'prom-client';
import { codePairs, type KeptObject, type RuleTable } from './kept-objects.js';
import type { ResultValue } from './results.js';

export const REPORT_METRIC_NAMES = {
  violations: 'kube_admission_policy_violations',
  objects: 'kube_admission_audit_objects',
  evaluations: 'kube_admission_audit_evaluations_total',
  writes: 'kube_admission_report_writes_total',
  reports: 'kube_admission_reports',
  events: 'kube_admission_violation_events_total',
} as const;

/** The results that count as violations: a rule's finding, a warning, a rule that could not decide. */
const VIOLATIONS: ReadonlySet<ResultValue> = new Set(['fail', 'warn', 'error']);

/**
 * The background audit's metrics: the current violations per rule, namespace and result (kept up
 * to date with every kept change, so /metrics never waits for a scan), the objects kept, the
 * evaluations, the report writes and the Events sent or dropped.
 */
export class ReportMetrics {
  readonly #violations: Gauge<'rule' | 'namespace' | 'result'>;
  readonly #objects: Gauge;
  readonly #evaluations: Counter;
  readonly #writes: Counter<'verb'>;
  readonly #reports: Gauge;
  readonly #events: Counter<'outcome'>;
  /** rule \0 namespace \0 result -> count: series at zero are removed, not left at 0 for ever. */
  readonly #counts = new Map<string, number>();

  constructor(registry: Registry) {
    const names = REPORT_METRIC_NAMES;
    this.#violations = new Gauge({
      name: names.violations,
      help: 'Objects the cluster stores that break a rule now, per rule, namespace ("" for cluster-scoped objects) and result (fail, warn, error), as the leader\'s background audit last judged them',
      labelNames: ['rule', 'namespace', 'result'] as const,
      registers: [registry],
    });
    this.#objects = new Gauge({ name: names.objects, help: 'Objects the leader\'s background audit keeps results of', registers: [registry] });
    this.#evaluations = new Counter({ name: names.evaluations, help: 'Objects the leader\'s background audit evaluated', registers: [registry] });
    this.#writes = new Counter({ name: names.writes, help: 'Report objects written by the leader, per verb (create, update, delete)', labelNames: ['verb'] as const, registers: [registry] });
    for (const verb of ['create', 'update', 'delete']) this.#writes.inc({ verb }, 0);
    this.#reports = new Gauge({ name: names.reports, help: 'Report objects of this install in the cluster, as the leader last wrote or read them', registers: [registry] });
    this.#events = new Counter({ name: names.events, help: 'Events on violating objects, sent or dropped by the rate limit', labelNames: ['outcome'] as const, registers: [registry] });
    for (const outcome of ['sent', 'dropped', 'failed']) this.#events.inc({ outcome }, 0);
  }

  /** Keeps the violations up to date with one kept change. */
  changed(rules: RuleTable, before: KeptObject | undefined, after: KeptObject | undefined): void {
    if (before) this.#count(rules, before, -1);
    if (after) this.#count(rules, after, 1);
    if (!before && after) this.#objects.inc();
    if (before && !after) this.#objects.dec();
  }

  evaluated(): void {
    this.#evaluations.inc();
  }

  written(verb: 'create' | 'update' | 'delete'): void {
    this.#writes.inc({ verb });
  }

  setReports(count: number): void {
    this.#reports.set(count);
  }

  event(outcome: 'sent' | 'dropped' | 'failed'): void {
    this.#events.inc({ outcome });
  }

  /** A term ended: what it kept is no more (the next leader counts its own). */
  reset(): void {
    this.#violations.reset();
    this.#counts.clear();
    this.#objects.set(0);
    this.#reports.set(0);
  }

  #count(rules: RuleTable, object: KeptObject, by: 1 | -1): void {
    for (const [rule, result] of codePairs(object.codes)) {
      if (!VIOLATIONS.has(result)) continue;
      const labels = { rule: rules.nameOf(rule), namespace: object.namespace, result };
      const key = `${labels.rule}\0${labels.namespace}\0${result}`;
      const count = (this.#counts.get(key) ?? 0) + by;
      if (count <= 0) {
        this.#counts.delete(key);
        this.#violations.remove(labels);
      } else {
        this.#counts.set(key, count);
        this.#violations.set(labels, count);
      }
    }
  }
}
