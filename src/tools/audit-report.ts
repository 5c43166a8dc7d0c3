import type { EvaluatedObject } from './evaluate-report.js';
import { decisionOf, resourceName } from './test-check.js';

export interface AuditFinding {
  resource: string;
  webhook: string;
  decision: 'denied' | 'warn' | 'audit' | 'error';
  message: string;
}

export interface NamespaceAudit {
  namespace: string;
  objects: number;
  denied: number;
  warned: number;
  audited: number;
  findings: AuditFinding[];
  /** Findings past MAX_FINDINGS_PER_WEBHOOK, counted per webhook but not kept. */
  omitted: Record<string, number>;
}

/**
 * Findings kept per namespace and webhook: a rule that trips on every object of a namespace says
 * so in the first ones, and memory stays flat however many objects the cluster has.
 */
export const MAX_FINDINGS_PER_WEBHOOK = 20;

/**
 * Findings per namespace (`(cluster)` for cluster-scoped objects), added a page at a time: only
 * the tallies and findings are kept, never the objects, so memory does not grow with the
 * objects audited.
 */
export class AuditTally {
  readonly #byNamespace = new Map<string, NamespaceAudit>();
  readonly #kept = new Map<string, number>();
  #objects = 0;

  add(results: readonly EvaluatedObject[]): void {
    for (const result of results) this.addOne(result);
  }

  get objects(): number {
    return this.#objects;
  }

  namespaces(): NamespaceAudit[] {
    return [...this.#byNamespace.values()].sort((a, b) => a.namespace.localeCompare(b.namespace));
  }

  /** One object's result, taken as it comes: the caller need not keep it. */
  addOne(result: EvaluatedObject): void {
    this.#objects++;
    const namespace = result.outcome.request.namespace || '(cluster)';
    const entry = this.#byNamespace.get(namespace) ?? { namespace, objects: 0, denied: 0, warned: 0, audited: 0, findings: [], omitted: {} };
    this.#byNamespace.set(namespace, entry);
    entry.objects++;
    const decisions = new Set<string>();
    for (const outcome of result.outcome.webhooks) {
      const decision = decisionOf(outcome);
      if (decision !== 'denied' && decision !== 'warn' && decision !== 'audit' && decision !== 'error') continue;
      decisions.add(decision);
      const texts = decision === 'warn' ? outcome.warnings : decision === 'audit' ? Object.values(outcome.auditAnnotations) : [outcome.message ?? outcome.why ?? ''];
      const kept = (this.#kept.get(`${namespace}\n${outcome.webhook}`) ?? 0) + 1;
      this.#kept.set(`${namespace}\n${outcome.webhook}`, kept);
      if (kept > MAX_FINDINGS_PER_WEBHOOK) entry.omitted[outcome.webhook] = (entry.omitted[outcome.webhook] ?? 0) + 1;
      else entry.findings.push({ resource: resourceName(result), webhook: outcome.webhook, decision, message: texts.join('; ') });
    }
    if (!result.outcome.allowed) entry.denied++;
    if (decisions.has('warn')) entry.warned++;
    if (decisions.has('audit')) entry.audited++;
  }
}

/** Groups each object's findings by namespace (`(cluster)` for cluster-scoped objects). */
export function auditByNamespace(results: readonly EvaluatedObject[]): NamespaceAudit[] {
  const tally = new AuditTally();
  tally.add(results);
  return tally.namespaces();
}

export function auditText(namespaces: readonly NamespaceAudit[], listed: readonly string[]): string {
  const lines = [`listed: ${listed.join(', ')}`, ''];
  for (const ns of namespaces) {
    lines.push(`namespace ${ns.namespace}: ${ns.objects} object(s), ${ns.denied} would be denied, ${ns.warned} warned, ${ns.audited} audited`);
    for (const f of ns.findings) lines.push(`  ${f.decision.padEnd(6)} ${f.resource} by ${f.webhook}: ${f.message}`);
    for (const [webhook, n] of Object.entries(ns.omitted)) lines.push(`  ... and ${n} more by ${webhook} (the first ${MAX_FINDINGS_PER_WEBHOOK} are shown)`);
  }
  const denied = namespaces.reduce((n, ns) => n + ns.denied, 0);
  const objects = namespaces.reduce((n, ns) => n + ns.objects, 0);
  lines.push('', `${objects} object(s) in ${namespaces.length} namespace(s): ${denied} would be denied`);
  return `${lines.join('\n')}\n`;
}
