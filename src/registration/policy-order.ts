import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebhookConfiguration } from './configuration-api.js';
import { canonical } from './configuration-diff.js';
import type { PrepareConfiguration } from './register.js';

/** Which policy a configuration carries: a digest of its webhooks and when the policy file it came from was written. */
export const POLICY_VERSION_ANNOTATION = 'kube-admission-server/policy-version';

export interface PolicyVersion {
  /** sha256 of the webhooks as registered, caBundle left out. */
  digest: string;
  /** The policy file's modification time where it was loaded (ISO 8601). */
  modified: string;
}

/** The digest of a configuration's webhooks without their caBundle: equal policies, equal digests. */
export function policyDigest(configuration: WebhookConfiguration): string {
  const webhooks = (configuration.webhooks ?? []).map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle: undefined } }));
  return `sha256:${createHash('sha256').update(JSON.stringify(canonical(webhooks))).digest('hex')}`;
}

/** The policy version a configuration records (undefined: none, or not one this server wrote). */
export function recordedPolicyVersion(configuration: WebhookConfiguration | undefined): PolicyVersion | undefined {
  try {
    const value = JSON.parse(configuration?.metadata?.annotations?.[POLICY_VERSION_ANNOTATION] ?? 'null') as Partial<PolicyVersion> | null;
    if (typeof value?.digest !== 'string' || typeof value.modified !== 'string' || Number.isNaN(Date.parse(value.modified))) return undefined;
    return { digest: value.digest, modified: value.modified };
  } catch {
    return undefined;
  }
}

/**
 * Keeps a leader from rolling the configurations back to an older policy. Replicas' policy volumes
 * update at different moments (a minute or two apart), so a leader's file can be older than the
 * one the live configuration was registered from (a replica that led before it, with a newer
 * volume). Every registration records its policy (POLICY_VERSION_ANNOTATION): the digest of its
 * webhooks and when its file was written on that node (kubelet writes a volume when the ConfigMap
 * changes, and anew for each new pod). A leader whose file is older than the recorded one and whose
 * webhooks differ keeps the live webhooks (its caBundle and owner still apply) and logs that it
 * waits for its volume; once its file is newer, it registers it. A configuration without the record
 * (absent, or from before it existed) gets this leader's policy.
 */
export class PolicyOrder {
  readonly #modifiedAt: () => Date;
  readonly #caBundlePem: () => string;
  readonly #logger: Logger;
  /** The newer digest last logged about, so the wait is logged once per version. */
  #waitingFor: string | undefined;

  /** `modifiedAt`: when the policy file in force was written; `caBundlePem`: the bundle registration would write now. */
  constructor(modifiedAt: () => Date, caBundlePem: () => string, logger: Logger) {
    this.#modifiedAt = modifiedAt;
    this.#caBundlePem = caBundlePem;
    this.#logger = logger;
  }

  readonly prepare: PrepareConfiguration = (desired, actual) => {
    const mine: PolicyVersion = { digest: policyDigest(desired), modified: this.#modifiedAt().toISOString() };
    const theirs = recordedPolicyVersion(actual);
    if (theirs?.digest === mine.digest) return withVersion(desired, theirs);
    if (!actual || !theirs || Date.parse(theirs.modified) <= Date.parse(mine.modified)) {
      this.#waitingFor = undefined;
      return withVersion(desired, mine);
    }
    if (this.#waitingFor !== theirs.digest) {
      this.#waitingFor = theirs.digest;
      this.#logger.warn(
        { configuration: actual.metadata?.name, kind: actual.kind, registered: theirs, local: mine },
        "the live webhook configuration carries a newer policy than this replica's file; keeping it until this replica's policy volume catches up",
      );
    }
    const caBundle = Buffer.from(this.#caBundlePem(), 'utf8').toString('base64');
    const webhooks = (actual.webhooks ?? []).map((webhook) => ({ ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } }));
    return withVersion({ ...desired, webhooks } as WebhookConfiguration, theirs);
  };
}

function withVersion(configuration: WebhookConfiguration, version: PolicyVersion): WebhookConfiguration {
  return {
    ...configuration,
    metadata: { ...configuration.metadata, annotations: { ...configuration.metadata?.annotations, [POLICY_VERSION_ANNOTATION]: JSON.stringify(version) } },
  } as WebhookConfiguration;
}
