/**
 * A steady stream of Pod creates through the local cluster's API (dryRun=All: admission runs,
 * nothing is stored), a third each that the installed policy admits, admits with a warning, and
 * denies; every answer is checked against what the policy says. Anything else, a failed webhook
 * call above all, is a failure with its status and message.
 */
import { rawRequest } from '../fake-apiserver/raw-client.js';
import type { ApiCredentials } from './cli-process.js';

export type LoadKind = 'labelled' | 'unlabelled' | 'privileged';

export interface LoadFailure {
  kind: LoadKind;
  status: number;
  detail: string;
  /** Date.now() when the answer came. */
  at: number;
}

export interface LoadReport {
  sent: Record<LoadKind, number>;
  failures: LoadFailure[];
  startedAt: number;
  endedAt: number;
}

export const DEFAULTED_LABEL = 'kube-admission-server/defaulted';
export const DENIED_BY = 'admission webhook "deny-privileged.kube-admission-server.kube-admission-server.svc" denied the request';
const KINDS: readonly LoadKind[] = ['labelled', 'unlabelled', 'privileged'];

function podFor(kind: LoadKind): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: `load-${kind}-`, ...(kind === 'unlabelled' ? {} : { labels: { app: 'load' } }) },
    spec: { containers: [{ name: 'c', image: 'nginx:1.27', ...(kind === 'privileged' ? { securityContext: { privileged: true } } : {}) }] },
  };
}

/** Why the answer is wrong for `kind`, or undefined when it is what the policy says. */
function check(kind: LoadKind, status: number, body: unknown, warnings: string): string | undefined {
  const message = typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : JSON.stringify(body);
  if (kind === 'privileged') return status === 403 && message.startsWith(DENIED_BY) ? undefined : `expected the deny-privileged denial, got ${message}`;
  if (status !== 201) return message;
  const labels = (body as { metadata?: { labels?: Record<string, string> } }).metadata?.labels ?? {};
  if (labels[DEFAULTED_LABEL] !== 'true') return `not mutated: labels ${JSON.stringify(labels)}`;
  const warned = warnings.includes('require-app-label');
  if (kind === 'unlabelled' && !warned) return `no require-app-label warning (Warning: ${warnings})`;
  if (kind === 'labelled' && warned) return `an unexpected warning: ${warnings}`;
  return undefined;
}

/**
 * A call that failed because the webhook's Pod closed a kept-alive connection just as kube-apiserver
 * sent a request on it (the server closes idle connections when it shuts down; HTTP/1.1 gives the
 * client no warning, and kube-apiserver does not retry a POST): EOF or a reset, nothing else.
 */
export const CLOSE_RACE = /failed to call webhook: Post "[^"]+": (EOF|read: connection reset by peer)$/;

/** Sends `perSecond` creates a second, one at a time, until `signal` aborts. */
export async function admissionLoad(api: ApiCredentials, namespace: string, perSecond: number, signal: AbortSignal): Promise<LoadReport> {
  const report: LoadReport = { sent: { labelled: 0, unlabelled: 0, privileged: 0 }, failures: [], startedAt: performance.now(), endedAt: 0 };
  const intervalMs = 1000 / perSecond;
  for (let i = 0; !signal.aborted; i++) {
    const kind = KINDS[i % KINDS.length] ?? 'labelled';
    const next = performance.now() + intervalMs;
    report.sent[kind] += 1;
    try {
      const reply = await rawRequest(api, 'POST', `/api/v1/namespaces/${namespace}/pods?dryRun=All&fieldManager=load`, { body: podFor(kind), timeoutMs: 40_000 });
      const warnings = [reply.headers.warning ?? []].flat().join('\n');
      const problem = check(kind, reply.status, reply.json, warnings);
      if (problem) report.failures.push({ kind, status: reply.status, detail: problem, at: Date.now() });
    } catch (error) {
      report.failures.push({ kind, status: 0, detail: (error as Error).message, at: Date.now() });
    }
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  report.endedAt = performance.now();
  return report;
}
