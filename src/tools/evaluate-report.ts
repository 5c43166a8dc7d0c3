import type { EvaluatedObject } from '../kube/evaluation/evaluate-objects.js';
import { objectDiff } from './object-diff.js';
import type { WebhookOutcome } from '../kube/evaluation/simulate.js';

export type { EvaluatedObject } from '../kube/evaluation/evaluate-objects.js';

function objectTitle({ manifest, outcome }: EvaluatedObject): string {
  const { request } = outcome;
  const where = request.namespace ? `${request.namespace}/` : '';
  const operation = [request.operation, request.subResource ? `${request.resource.resource}/${request.subResource}` : '', request.dryRun ? 'dry run' : ''].filter(Boolean).join(' ');
  return `${manifest.object.kind} ${where}${request.name ?? manifest.object.metadata?.generateName ?? ''} (${operation}, ${manifest.source})`;
}

function webhookLines(outcome: WebhookOutcome): string[] {
  const head = `  ${outcome.type.padEnd(10)} ${outcome.webhook}: ${outcome.decision}${outcome.patch ? ' (patched)' : ''}`;
  if (outcome.decision === 'skipped') return [`${head} (${outcome.why})`];
  const lines = [outcome.message ? `${head}: ${outcome.message}` : head];
  if (outcome.why) lines.push(`    failure: ${outcome.why}`);
  for (const warning of outcome.warnings) lines.push(`    warning: ${warning}`);
  for (const [key, value] of Object.entries(outcome.auditAnnotations)) lines.push(`    audit annotation ${outcome.webhook}/${key}: ${value}`);
  return lines;
}

/** One object's block of the human report: each webhook's decision and findings, the patch as a diff, the verdict. */
function textBlock(result: EvaluatedObject, verbose: boolean): string {
  const { outcome } = result;
  const lines = [objectTitle(result)];
  for (const webhook of outcome.webhooks) {
    if (webhook.decision === 'skipped' && !verbose) continue;
    lines.push(...webhookLines(webhook));
  }
  const original = outcome.request.object;
  if (original && outcome.object && outcome.webhooks.some((w) => w.patch)) {
    lines.push('  patch:', ...objectDiff(original, outcome.object).map((line) => `    ${line}`));
  }
  lines.push(outcome.allowed ? '  => allowed' : `  => DENIED: ${outcome.denial?.message ?? ''}`);
  return lines.join('\n');
}

/** One object's entry of the machine report: every webhook outcome and the final object. */
function jsonEntry({ manifest, outcome }: EvaluatedObject) {
  return {
    source: manifest.source,
    kind: outcome.request.kind,
    ...(outcome.request.subResource ? { subResource: outcome.request.subResource } : {}),
    dryRun: outcome.request.dryRun,
    namespace: outcome.request.namespace ?? '',
    name: outcome.request.name ?? '',
    operation: outcome.request.operation,
    allowed: outcome.allowed,
    ...(outcome.denial ? { denial: outcome.denial } : {}),
    webhooks: outcome.webhooks,
    object: outcome.object,
  };
}

/** What JSON.stringify(value, null, 2) writes around a value two arrays deep. */
const NESTED_OPEN = '[\n  [\n';
const NESTED_CLOSE = '\n  ]\n]';

/**
 * An entry of `"objects": [...]` in JSON.stringify(report, null, 2), indented two levels: the
 * entry stringified at that depth and cut out (a slice shares the text), rather than stringified
 * alone and indented again, which made a second copy of every entry's text for the garbage
 * collector.
 */
function jsonPiece(result: EvaluatedObject): string {
  return JSON.stringify([[jsonEntry(result)]], null, 2).slice(NESTED_OPEN.length, -NESTED_CLOSE.length);
}

/**
 * A report built one result at a time, keeping only its text: the requests and objects of a
 * result are garbage once it is added (thousands of decoded objects held until the end cost
 * more in garbage collection than the rules cost to evaluate).
 */
export class EvaluateReport {
  readonly #format: 'text' | 'json';
  readonly #verbose: boolean;
  readonly #pieces: string[] = [];
  #denied = 0;

  constructor(format: 'text' | 'json', verbose = false) {
    this.#format = format;
    this.#verbose = verbose;
  }

  get objects(): number {
    return this.#pieces.length;
  }

  get allowed(): boolean {
    return this.#denied === 0;
  }

  add(result: EvaluatedObject): void {
    if (!result.outcome.allowed) this.#denied++;
    this.#pieces.push(this.#format === 'text' ? textBlock(result, this.#verbose) : jsonPiece(result));
  }

  /** The whole report, as textReport() or jsonReport() would write it for the same results. */
  toString(): string {
    const total = this.#pieces.length;
    if (this.#format === 'text') return `${[...this.#pieces, `${total} object(s): ${total - this.#denied} allowed, ${this.#denied} denied`].join('\n\n')}\n`;
    const objects = total === 0 ? '[]' : `[\n${this.#pieces.join(',\n')}\n  ]`;
    return `{\n  "allowed": ${this.allowed},\n  "objects": ${objects}\n}\n`;
  }
}

function reportOf(results: readonly EvaluatedObject[], format: 'text' | 'json', verbose = false): string {
  const report = new EvaluateReport(format, verbose);
  for (const result of results) report.add(result);
  return report.toString();
}

/** The human report: per object, each webhook's decision and findings, the patch as a diff, the verdict. */
export function textReport(results: readonly EvaluatedObject[], verbose: boolean): string {
  return reportOf(results, 'text', verbose);
}

/** The machine report: one entry per object with every webhook outcome and the final object. */
export function jsonReport(results: readonly EvaluatedObject[]): string {
  return reportOf(results, 'json');
}
