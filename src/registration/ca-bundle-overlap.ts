import type { V1MutatingWebhook } from '@kubernetes/client-node';
import type { WebhookConfiguration } from './configuration-api.js';
import type { PrepareConfiguration } from './register.js';
import { overlapBundle } from '../tls/ca-overlap.js';

/** When each CA kept in the caBundle for the overlap left the current set: fingerprint -> ISO time. */
export const RETIRED_CAS_ANNOTATION = 'kube-admission-server/retired-cas';

/** Longest single timer; a longer overlap is reached in steps (each pass schedules again). */
const MAX_TIMER_MS = 24 * 60 * 60 * 1000;

/**
 * The registered caBundle with its overlap (tls/ca-overlap.ts). The previous state is read back
 * from the live configuration at every registration pass: the bundle it holds, and the
 * annotation recording when each retained CA left. So a restarted replica or a new leader carries
 * on where the last one left off, nothing lives only in memory, and since only the leader writes,
 * a follower whose volume is a minute behind changes nothing. A timer asks for a pass when the
 * next retained CA is due to drop out.
 */
export class CaBundleOverlap {
  readonly #overlapMs: number;
  readonly #now: () => Date;
  #onPruneDue: (() => void) | undefined;
  #timer: { at: number; handle: NodeJS.Timeout } | undefined;

  constructor(overlapMs: number, now: () => Date = () => new Date()) {
    this.#overlapMs = overlapMs;
    this.#now = now;
  }

  /** `callback` runs when a retained CA's overlap or validity ends (the leader then runs a pass). */
  onPruneDue(callback: () => void): void {
    this.#onPruneDue = callback;
  }

  readonly prepare: PrepareConfiguration = (desired, actual) => {
    const webhooks = (desired.webhooks ?? []) as V1MutatingWebhook[];
    const first = webhooks[0];
    if (!first) return desired;
    const result = overlapBundle({
      // Every desired webhook carries the same bundle: the CAs in force.
      currentPem: decode(first.clientConfig.caBundle),
      registeredPem: ((actual?.webhooks ?? []) as V1MutatingWebhook[]).map((webhook) => decode(webhook.clientConfig?.caBundle)).join(''),
      retiredAt: recorded(actual?.metadata?.annotations?.[RETIRED_CAS_ANNOTATION]),
      now: this.#now(),
      overlapMs: this.#overlapMs,
    });
    this.#schedule(result.nextPruneAt);
    const caBundle = Buffer.from(result.bundlePem, 'utf8').toString('base64');
    return {
      ...desired,
      metadata: { ...desired.metadata, annotations: { ...desired.metadata?.annotations, [RETIRED_CAS_ANNOTATION]: JSON.stringify(result.retiredAt) } },
      webhooks: webhooks.map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } })),
    } as WebhookConfiguration;
  };

  stop(): void {
    clearTimeout(this.#timer?.handle);
    this.#timer = undefined;
  }

  #schedule(at: Date | undefined): void {
    if (at === undefined || (this.#timer && this.#timer.at <= at.getTime())) return;
    this.stop();
    const delayMs = Math.min(Math.max(0, at.getTime() - this.#now().getTime()), MAX_TIMER_MS);
    const handle = setTimeout(() => {
      this.#timer = undefined;
      this.#onPruneDue?.();
    }, delayMs);
    handle.unref();
    this.#timer = { at: at.getTime(), handle };
  }
}

function decode(base64: string | undefined): string {
  return Buffer.from(base64 ?? '', 'base64').toString('utf8');
}

/** The annotation's record; anything unreadable counts as no record (the CA then starts its overlap now). */
function recorded(text: string | undefined): Record<string, string> {
  try {
    const value: unknown = JSON.parse(text ?? '{}');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {};
  }
}
