import type { WebhookSpec } from '../policy/types.js';
import { atLeast, MATCH_CONDITIONS_SINCE, type ServerVersion } from './server-version.js';

/**
 * Refuses to register matchConditions with a kube-apiserver older than 1.28: there the field is
 * dropped when the configuration is stored (the feature gate is off), so the webhook would be
 * called for everything its rules match, silently wider than the policy says.
 */
export class MatchConditionsUnsupportedError extends Error {
  constructor(
    readonly version: ServerVersion,
    readonly webhooks: readonly string[],
  ) {
    super(
      `kube-apiserver ${version.gitVersion} drops matchConditions (they need Kubernetes ${MATCH_CONDITIONS_SINCE.major}.${MATCH_CONDITIONS_SINCE.minor} or later), ` +
        `so ${webhooks.length === 1 ? 'webhook' : 'webhooks'} ${webhooks.join(', ')} would match more than the policy says; ` +
        'not registering: remove their matchConditions or upgrade the cluster',
    );
    this.name = 'MatchConditionsUnsupportedError';
  }
}

/** Throws MatchConditionsUnsupportedError naming every webhook that uses matchConditions when `version` cannot honour them. */
export function checkMatchConditionsSupported(webhooks: readonly WebhookSpec[], version: ServerVersion | undefined): void {
  if (version === undefined || atLeast(version, MATCH_CONDITIONS_SINCE)) return;
  const using = webhooks.filter((w) => (w.matchConditions?.length ?? 0) > 0).map((w) => `${w.type} ${w.name}`);
  if (using.length > 0) throw new MatchConditionsUnsupportedError(version, using);
}
