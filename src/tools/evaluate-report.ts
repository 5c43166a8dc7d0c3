import type { Manifest } from './manifests.js';
import { objectDiff } from './object-diff.js';
import type { ObjectOutcome, WebhookOutcome } from './simulate.js';

/** One manifest and what kube-apiserver would make of it. */
export interface EvaluatedObject {
  manifest: Manifest;
  outcome: ObjectOutcome;
}

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

/** The human report: per object, each webhook's decision and findings, the patch as a diff, the verdict. */
export function textReport(results: readonly EvaluatedObject[], verbose: boolean): string {
  const blocks = results.map((result) => {
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
  });
  const denied = results.filter((r) => !r.outcome.allowed).length;
  blocks.push(`${results.length} object(s): ${results.length - denied} allowed, ${denied} denied`);
  return `${blocks.join('\n\n')}\n`;
}

/** The machine report: one entry per object with every webhook outcome and the final object. */
export function jsonReport(results: readonly EvaluatedObject[]): string {
  const objects = results.map(({ manifest, outcome }) => ({
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
  }));
  return `${JSON.stringify({ allowed: results.every((r) => r.outcome.allowed), objects }, null, 2)}\n`;
}
