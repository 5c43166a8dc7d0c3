import type { V1MutatingWebhook } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { WebhookConfiguration } from './configuration-api.js';
import type { PrepareConfiguration } from './register.js';
import { refusalFor } from '../cel/match-conditions.js';
import { atLeast, MATCH_CONDITIONS_SINCE, type ServerVersion } from '../kube/server-version.js';

/** A webhook whose matchConditions the API server would drop, and what was registered instead. */
export interface WithheldWebhook {
  name: string;
  /**
   * 'kept': its entry stays as registered (caBundle kept current), restored as it was if the
   * configuration was deleted meanwhile; 'left-out': it was never registered (by this process), so it is not.
   */
  instead: 'kept' | 'left-out';
}

type Webhook = V1MutatingWebhook;

const kindOf = (configuration: WebhookConfiguration): string => (configuration.kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating');

/**
 * kube-apiserver before 1.28 drops matchConditions when it stores a configuration (the feature
 * gate is off there), so a webhook registered with them would be called for everything its rules
 * match: wider than the policy says; a later one refuses the whole configuration (422) when one
 * condition does not compile with its CEL library (a policy loaded by a follower before it knew the
 * version, which then leads). Such a webhook is never written: it keeps its live entry as
 * the previous policy registered it (only its caBundle follows the CA; a deleted configuration gets
 * it back as this process last saw it), or, never registered, it stays out. Everything else in the configuration is reconciled as usual, so restores,
 * caBundle pushes and owner updates go on. Applied as the first PrepareConfiguration step.
 */
export class MatchConditionsGate {
  readonly #logger: Logger;
  #version: ServerVersion | undefined;
  /** The entries kept so far, by name: restored as they were if someone deletes the configuration. */
  readonly #kept = new Map<string, Webhook>();
  /** What was last reported per kind, so each change is logged once, not at every pass. */
  readonly #reported = new Map<string, string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Until the version is known nothing is withheld: it is read before anything is registered. */
  setVersion(version: ServerVersion): void {
    this.#version = version;
  }

  readonly prepare: PrepareConfiguration = (desired, actual) => {
    const version = this.#version;
    if (version === undefined) return desired;
    const dropsConditions = !atLeast(version, MATCH_CONDITIONS_SINCE);
    const live = new Map(((actual?.webhooks ?? []) as Webhook[]).map((webhook) => [webhook.name, webhook]));
    const withheld: WithheldWebhook[] = [];
    const webhooks: Webhook[] = [];
    for (const webhook of (desired.webhooks ?? []) as Webhook[]) {
      const conditions = webhook.matchConditions ?? [];
      if (conditions.length === 0 || (!dropsConditions && conditions.every((c) => refusalFor(c.expression, version) === undefined))) {
        webhooks.push(webhook);
        continue;
      }
      const registered = live.get(webhook.name) ?? this.#kept.get(webhook.name);
      if (registered) this.#kept.set(webhook.name, registered);
      withheld.push({ name: webhook.name, instead: registered ? 'kept' : 'left-out' });
      if (registered) webhooks.push({ ...registered, clientConfig: { ...registered.clientConfig, caBundle: webhook.clientConfig.caBundle } });
    }
    this.#report(kindOf(desired), version, withheld, dropsConditions);
    // Nothing withheld: the desired configuration itself, so later steps see it unchanged.
    return withheld.length === 0 ? desired : ({ ...desired, webhooks } as WebhookConfiguration);
  };

  #report(kind: string, version: ServerVersion, withheld: readonly WithheldWebhook[], dropsConditions: boolean): void {
    const key = JSON.stringify(withheld);
    if ((this.#reported.get(kind) ?? '[]') === key) return;
    this.#reported.set(kind, key);
    if (withheld.length === 0) {
      this.#logger.info({ kind }, 'no webhook withheld for its matchConditions any more');
      return;
    }
    const names = withheld.map((w) => `${kind} ${w.name}`).join(', ');
    const why = dropsConditions
      ? `drops matchConditions (they need Kubernetes ${MATCH_CONDITIONS_SINCE.major}.${MATCH_CONDITIONS_SINCE.minor} or later), so ${names} would match more than the policy says`
      : `refuses a matchCondition of ${names} (it does not compile with that version's CEL library)`;
    this.#logger.error(
      { kind, version: version.gitVersion, withheld },
      `kube-apiserver ${version.gitVersion} ${why}: not registering their new version ` +
        '(a registered entry stays as it was, one that is not registered stays out); ' +
        (dropsConditions ? 'remove their matchConditions or upgrade the cluster' : 'fix the condition (`render --kubernetes-version` shows why) or upgrade the cluster'),
    );
  }
}
