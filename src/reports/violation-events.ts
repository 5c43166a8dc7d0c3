import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { requestJson } from '../kube/paged-list.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import { decodeResults, type KeptObject, type RuleTable } from './kept-objects.js';
import type { ReportMetrics } from './report-metrics.js';

/** Events a second at most once the burst is spent, and how many may wait to be sent. */
const EVENTS = { perSecond: 1, burst: 20, pending: 100 } as const;
const VIOLATIONS = new Set(['fail', 'warn']);

/** What a violation's Event needs beside the object. */
export interface ViolationEventOptions {
  kubeConfig: KubeConfig;
  /** The pod that sends them (reportingInstance). */
  instance: string;
  rules: RuleTable;
  metrics: ReportMetrics;
  logger: Logger;
  signal: AbortSignal;
}

function kubeTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * A Kubernetes Event (Warning, reason PolicyViolation) on an object when one of its rules turns
 * from passing (or not applying) to fail or warn: for clusters that want no report objects, and
 * for `kubectl describe`. Rate limited (a token bucket; what finds no token is dropped and
 * counted), sent one at a time, never awaited by the audit.
 */
export class ViolationEvents {
  readonly #options: ViolationEventOptions;
  readonly #pending: Record<string, unknown>[] = [];
  #tokens: number = EVENTS.burst;
  #at = performance.now();
  #sending = false;

  constructor(options: ViolationEventOptions) {
    this.#options = options;
  }

  /** One kept change, after the term's first scan (what that scan finds was there before, not new). */
  changed(before: KeptObject | undefined, after: KeptObject | undefined): void {
    if (!after) return;
    const was = new Set(before ? decodeResults(before, this.#options.rules).filter((r) => VIOLATIONS.has(r.result)).map((r) => r.rule) : []);
    for (const result of decodeResults(after, this.#options.rules)) {
      if (!VIOLATIONS.has(result.result) || was.has(result.rule)) continue;
      if (!this.#take()) {
        this.#options.metrics.event('dropped');
        continue;
      }
      this.#pending.push(this.#event(after, result.rule, result.message ?? ''));
    }
    void this.#send();
  }

  #take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(EVENTS.burst, this.#tokens + ((now - this.#at) / 1000) * EVENTS.perSecond);
    this.#at = now;
    if (this.#tokens < 1 || this.#pending.length >= EVENTS.pending) return false;
    this.#tokens -= 1;
    return true;
  }

  #event(object: KeptObject, rule: string, message: string): Record<string, unknown> {
    const now = kubeTime(new Date());
    // Events about cluster-scoped objects go to the default namespace, as kubectl and the controllers put them.
    const namespace = object.namespace || 'default';
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${object.name}.`, namespace },
      involvedObject: { apiVersion: object.kind.apiVersion, kind: object.kind.kind, name: object.name, ...(object.namespace ? { namespace: object.namespace } : {}), uid: object.uid },
      reason: 'PolicyViolation',
      message: `${rule}: ${message}`.slice(0, 1024),
      type: 'Warning',
      source: { component: 'kube-admission-server' },
      reportingComponent: 'kube-admission-server',
      reportingInstance: this.#options.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }

  async #send(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      for (let event = this.#pending.shift(); event && !this.#options.signal.aborted; event = this.#pending.shift()) {
        const namespace = (event['metadata'] as { namespace: string }).namespace;
        try {
          await requestJson(this.#options.kubeConfig, { method: 'POST', path: `/api/v1/namespaces/${namespace}/events`, body: JSON.stringify(event) }, DEFAULT_REQUEST_TIMEOUT_MS, this.#options.signal);
          this.#options.metrics.event('sent');
        } catch (error) {
          this.#options.metrics.event('failed');
          this.#options.logger.debug({ error: error instanceof Error ? error.message : String(error) }, 'an Event could not be written');
        }
      }
    } finally {
      this.#sending = false;
    }
  }
}
