/**
 * A steady stream of Pod creates through the local cluster's API (dryRun=All: admission runs,
 * nothing is stored), a third each that the installed policy admits, admits with a warning, and
 * denies; every answer is checked against what the policy says. Anything else, a failed webhook
 * call above all, is a failure with its status and message.
 */
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { within } from '../util/waits.js';
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
/** The enforcing rules of the example policy share one webhook (grouped registration); the message names the rule. */
export const DENIED_BY = 'admission webhook "validating-fail-t5.kube-admission-server.kube-admission-server.svc" denied the request: deny-privileged';
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

/**
 * Pod creates at a steady `perSecond`, one at a time, until stopped. A steady stream proves that
 * every write is admitted as the policy says while the webhook's Pods come and go; it is not a
 * stress test (the benchmarks measure throughput).
 */
export class AdmissionLoad {
  readonly report: LoadReport = { sent: { labelled: 0, unlabelled: 0, privileged: 0 }, failures: [], startedAt: performance.now(), endedAt: 0 };
  /** Date.now() of the first and the last answer (or failure). */
  firstAnswerAt: number | undefined;
  lastAnswerAt: number | undefined;
  readonly #stop = new AbortController();
  readonly #answered = new EventEmitter();
  readonly #run: Promise<void>;

  constructor(
    private readonly api: ApiCredentials,
    private readonly namespace: string,
    perSecond: number,
  ) {
    this.#run = this.run(1000 / perSecond);
  }

  /** Resolves with the Date.now() of the first answer after `after` (Date.now() scale); rejects at the deadline. */
  answerAfter(after: number, timeoutMs: number): Promise<number> {
    const answered = new Promise<number>((resolve) => {
      const check = (): void => {
        if (this.lastAnswerAt === undefined || this.lastAnswerAt <= after) return;
        this.#answered.off('answer', check);
        resolve(this.lastAnswerAt);
      };
      this.#answered.on('answer', check);
      check();
    });
    return within(timeoutMs, `an admission answer after ${new Date(after).toISOString()}`, answered);
  }

  async stop(): Promise<LoadReport> {
    this.#stop.abort();
    await this.#run;
    return this.report;
  }

  private async run(intervalMs: number): Promise<void> {
    for (let i = 0; !this.#stop.signal.aborted; i++) {
      const kind = KINDS[i % KINDS.length] ?? 'labelled';
      const next = performance.now() + intervalMs;
      this.report.sent[kind] += 1;
      const problem = await this.create(kind);
      const at = Date.now();
      if (problem) this.report.failures.push({ kind, status: problem.status, detail: problem.detail, at });
      this.firstAnswerAt ??= at;
      this.lastAnswerAt = at;
      this.#answered.emit('answer');
      const wait = next - performance.now();
      // Aborting the pause rejects it: the loop then ends.
      if (wait > 0) await delay(wait, undefined, { signal: this.#stop.signal }).catch(() => undefined);
    }
    this.report.endedAt = performance.now();
  }

  /** One create, checked; what was wrong with its answer, if anything. */
  private async create(kind: LoadKind): Promise<{ status: number; detail: string } | undefined> {
    try {
      const reply = await rawRequest(this.api, 'POST', `/api/v1/namespaces/${this.namespace}/pods?dryRun=All&fieldManager=load`, { body: podFor(kind), timeoutMs: 40_000 });
      const warnings = [reply.headers.warning ?? []].flat().join('\n');
      const problem = check(kind, reply.status, reply.json, warnings);
      return problem === undefined ? undefined : { status: reply.status, detail: problem };
    } catch (error) {
      return { status: 0, detail: (error as Error).message };
    }
  }
}
