/** Policy files for end-to-end tests, written as a ConfigMap would carry them. */

export const policyText = (webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n${webhooks}`;

export const DENY_PRIVILEGED_ENTRY = '  - name: deny-privileged\n    kind: denyPrivileged\n';

/** A requireLabels webhook named `name` that wants label `key`. */
export const requireLabelEntry = (name: string, key: string): string => `  - name: ${name}\n    kind: requireLabels\n    params:\n      labels:\n        - key: ${key}\n`;

/** The warning a replica answers for a webhook it does not serve. */
export const unservedWarning = (name: string): string => `this replica does not serve "${name}" (yet or any more); allowed`;

/**
 * A cel entry `max-replicas` (params in a ConfigMap's `data`, so it may run natively) under
 * `engine`, beside deny-privileged, which always stays a webhook.
 */
export const maxReplicasPolicy = (engine: string): string =>
  policyText(`  - name: max-replicas
    kind: cel
    engine: ${engine}
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }]
    params:
      data: { maxReplicas: "3" }
    validations:
      - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
        messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + params.data.maxReplicas"
        reason: Forbidden
${DENY_PRIVILEGED_ENTRY}`);
