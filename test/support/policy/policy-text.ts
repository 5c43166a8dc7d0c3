/** Policy files for end-to-end tests, written as a ConfigMap would carry them. */

export const policyText = (webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n${webhooks}`;

export const DENY_PRIVILEGED_ENTRY = '  - name: deny-privileged\n    kind: denyPrivileged\n';

/** A requireLabels webhook named `name` that wants label `key`. */
export const requireLabelEntry = (name: string, key: string): string => `  - name: ${name}\n    kind: requireLabels\n    params:\n      labels:\n        - key: ${key}\n`;

/** The warning a replica answers for a webhook it does not serve. */
export const unservedWarning = (name: string): string => `this replica does not serve "${name}" (yet or any more); allowed`;
