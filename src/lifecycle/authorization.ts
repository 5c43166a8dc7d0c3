import type { Logger } from 'pino';
import type { AuthorizationSource } from '../cel/authorization-answers.js';
import type { Webhook } from '../admission/types.js';
import type { ClusterConnection } from './cluster-connection.js';

/** Who answers the policy's `authorizer` checks on this server, and the check at load that it can. */
export interface ServerAuthorization {
  /** SubjectAccessReviews to the cluster; undefined without one. */
  readonly source: AuthorizationSource | undefined;
  /**
   * Decided when a policy version loads: when some webhook asks the authorizer, the server must be
   * able to ask kube-apiserver. Throws when it cannot: the start fails (exit 1, as for any missing
   * grant), a later version is rejected and the previous one stays.
   */
  check(webhooks: readonly Webhook[], signal: AbortSignal): Promise<void>;
}

/** The webhooks whose rules ask the authorizer. */
export function authorizerAskers(webhooks: readonly Webhook[]): string[] {
  return webhooks.filter((webhook) => webhook.type === 'validating' && webhook.usesAuthorizer).map((webhook) => webhook.name);
}

/** The grant such a policy needs, and where the install gets it. */
export const AUTHORIZER_GRANT =
  "the server's ServiceAccount needs create on subjectaccessreviews.authorization.k8s.io (the Helm chart grants it when the policy uses authorizer; kustomize: add the component manifests/components/authorizer)";

export async function serverAuthorization(cluster: ClusterConnection | undefined, logger: Logger): Promise<ServerAuthorization> {
  // The Kubernetes client only with a cluster: a local start does not load it for nothing.
  const reviews = cluster ? new (await import('../kube/subject-access-reviews.js')).SubjectAccessReviews({ api: cluster.api }) : undefined;
  return {
    source: reviews,
    async check(webhooks, signal) {
      const names = authorizerAskers(webhooks);
      if (names.length === 0) return;
      const which = `webhook${names.length === 1 ? '' : 's'} ${names.join(', ')} ask${names.length === 1 ? 's' : ''} the authorizer`;
      if (!reviews) {
        throw new Error(`${which}, which this server answers with SubjectAccessReviews to kube-apiserver, and no cluster is configured (--kubeconfig, or run in a pod); try such a policy with evaluate and --authorizer-answer`);
      }
      // One SubjectAccessReview, with the deadline every review call has.
      const probe = await reviews.probe(signal);
      if (probe === 'forbidden') {
        throw new Error(`${which}: ${AUTHORIZER_GRANT}`);
      }
      if (probe !== 'ok') logger.warn({ webhooks: names, error: probe.failed }, 'could not confirm that SubjectAccessReviews may be created; authorizer checks error until they can');
      else logger.info({ webhooks: names }, 'these webhooks ask the authorizer: answering them with SubjectAccessReviews');
    },
  };
}
