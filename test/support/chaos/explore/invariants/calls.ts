/**
 * I1 and I2, judged on every webhook call kube-apiserver makes (the admission caller's records),
 * with nothing from src/: the webhook's failurePolicy as the calling kube-apiserver's cache held
 * it, the answer's warnings, the object the call was about (the load names its Pods by class) and
 * the rule the webhook came from (the policy files the run wrote).
 *
 * Failed calls are judged once the step is over, because three causes are no fault of the server
 * and are only known by then: the calling kube-apiserver went down during the call (its
 * connections die with it); the call went to a Pod the run SIGKILLed, in flight or routed there
 * before its endpoint left the Service (no server can answer after SIGKILL); a kept-alive
 * connection cut as its replica closed it at the end of a clean shutdown (the HTTP/1.1 close race).
 * Those are counted apart; every other failed call is an I1 violation.
 */
import type { CallRecord } from '../../../../../local-cluster/admission-caller/index.js';
import { classOfPod } from '../load.js';
import type { PolicyHistory } from '../policy-history.js';
import type { Ledger } from './ledger.js';

/** The server's answer for a webhook it does not serve (docs/policy.md: allowed, with this warning). */
const NOT_SERVED = /does not serve "([^"]+)"/;

/**
 * The policy entries a call was for, from its URL (docs/policy.md, "Grouped registration"): a
 * group's path names its members after the group (`/validate/<group>/<a>.<b>/<c>`), an entry's
 * path is `/validate/<entry>`.
 */
export function entriesCalled(call: Pick<CallRecord, 'url' | 'webhook'>): string[] {
  const path = /^https?:\/\/[^/]+(\/[^?]*)/.exec(call.url)?.[1] ?? '';
  const match = /^\/(?:validate|mutate)\/([^/]+)(?:\/(.+))?$/.exec(path);
  if (!match) return [call.webhook.split('.')[0] ?? ''];
  return match[2] === undefined ? [match[1]!] : match[2].split(/[/.]/);
}


export type FailureClass = 'tls' | 'refused' | 'timeout' | 'cut' | 'other';

export function failureClass(message: string): FailureClass {
  // The URL carries `?timeout=5s`: classify by what follows it.
  const error = message.replace(/Post "[^"]*": /, '');
  if (/x509|certificate|tls:|handshake|SSL/i.test(error)) return 'tls';
  if (/connection refused|ECONNREFUSED|no endpoints/i.test(error)) return 'refused';
  if (/timeout|deadline exceeded|ETIMEDOUT/i.test(error)) return 'timeout';
  if (/EOF|reset|socket hang up|ECONNRESET|aborted/i.test(error)) return 'cut';
  return 'other';
}

interface Window {
  from: number;
  to: number;
}

export interface CallCounts {
  calls: number;
  allowed: number;
  denied: number;
  failed: number;
  failedByClass: Record<FailureClass, number>;
  /** Failed calls whose kube-apiserver went down during the call. */
  cutByApiserverRestart: number;
  /** Failed calls to a Pod the run SIGKILLed, before its endpoint left. */
  lostToSigkill: number;
  /**
   * Cut (EOF, reset) on a kept-alive connection as its replica closed it at the end of a clean
   * shutdown: HTTP/1.1 cannot close an idle connection without racing a request the client may be
   * writing on it, and Go's transport does not retry a written POST. Counted, not hidden.
   */
  closeRaces: number;
  notServedOnIgnore: number;
}

export class CallJudge {
  readonly counts: CallCounts = {
    calls: 0,
    allowed: 0,
    denied: 0,
    failed: 0,
    failedByClass: { tls: 0, refused: 0, timeout: 0, cut: 0, other: 0 },
    cutByApiserverRestart: 0,
    lostToSigkill: 0,
    closeRaces: 0,
    notServedOnIgnore: 0,
  };
  readonly #pending: CallRecord[] = [];
  /** performance.now() windows while each kube-apiserver (by name) was down. */
  readonly #down = new Map<string, Window[]>();
  readonly #kills: Window[] = [];
  readonly #closes: Window[] = [];

  constructor(
    private readonly history: PolicyHistory,
    private readonly ledger: Ledger,
    private readonly runMs: (performanceNow: number) => number,
  ) {}

  /** A kube-apiserver's down time (performance.now()); `to` Infinity while it is still down. */
  apiserverDown(name: string, window: Window): void {
    this.#down.set(name, [...(this.#down.get(name) ?? []), window]);
  }

  /** A Pod the run SIGKILLed: from the kill until its endpoint left the Service (plus kube-proxy's sync). */
  sigkilled(window: Window): void {
    this.#kills.push(window);
  }

  /** A replica closed its listener after a SIGTERM: from the end of its delay to just after its exit. */
  closing(window: Window): void {
    this.#closes.push(window);
  }

  record(call: CallRecord): void {
    this.counts.calls++;
    if (call.outcome === 'error') {
      this.#pending.push(call);
      return;
    }
    if (call.outcome === 'allowed') this.counts.allowed++;
    else this.counts.denied++;
    this.#judgeAnswer(call);
  }

  #where(call: CallRecord): string {
    return `${call.apiserver} -> ${call.webhook} (${call.phase}, failurePolicy ${call.failurePolicy}) for ${call.namespace}/${call.name} at ${(this.runMs(call.startedAt) / 1000).toFixed(1)} s`;
  }

  /** I2 on an answered call. */
  #judgeAnswer(call: CallRecord): void {
    const entries = entriesCalled(call);
    const notServedNames = call.warnings.flatMap((w) => NOT_SERVED.exec(w)?.[1] ?? []);
    for (const name of notServedNames) {
      if (call.failurePolicy !== 'Fail') this.counts.notServedOnIgnore++;
      else this.ledger.add('I2', `answered "not served" for ${name}: ${this.#where(call)}`);
    }
    const objectClass = classOfPod(call.name);
    if (call.outcome === 'allowed' && call.failurePolicy === 'Fail') {
      for (const entry of entries.filter((name) => !notServedNames.includes(name))) {
        const kind = this.history.kindOfWebhook(entry);
        if ((kind === 'denyPrivileged' && objectClass === 'privileged') || (kind === 'denyHostNamespaces' && objectClass === 'host')) {
          this.ledger.add('I2', `an enforcing webhook allowed what its rule ${entry} refuses: ${this.#where(call)}`);
        }
      }
    }
    if (call.outcome === 'denied' && objectClass === 'compliant') this.ledger.add('I2', `refused a Pod every policy version admits: ${this.#where(call)}`);
  }

  /** Judges the failed calls so far; call once the windows they may fall in are closed (a step's end). */
  flush(): void {
    for (const call of this.#pending.splice(0)) {
      const error = call.error ?? '';
      const overlaps = (w: Window): boolean => call.startedAt <= w.to && call.endedAt >= w.from;
      if ((this.#down.get(call.apiserver) ?? []).some(overlaps)) {
        this.counts.cutByApiserverRestart++;
        continue;
      }
      const cls = failureClass(error);
      if ((cls === 'refused' || cls === 'cut') && this.#kills.some(overlaps)) {
        this.counts.lostToSigkill++;
        continue;
      }
      if (cls === 'cut' && this.#closes.some(overlaps)) {
        this.counts.closeRaces++;
        continue;
      }
      this.counts.failed++;
      this.counts.failedByClass[cls]++;
      this.ledger.add('I1', `${cls}: ${this.#where(call)}: ${error.slice(0, 300)}`);
      const enforcing = entriesCalled(call).filter((entry) => {
        const kind = this.history.kindOfWebhook(entry);
        return kind !== undefined && kind !== 'defaultLabels' && this.history.modeNow(entry) === 'enforce';
      });
      if (call.failurePolicy === 'Ignore' && enforcing.length > 0) {
        this.ledger.add('I2', `an enforcing rule's call failed open (${enforcing.join(', ')}): ${this.#where(call)}`);
      }
    }
  }
}
