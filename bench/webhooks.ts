import { parsePolicy } from '../src/policy/policy-file.js';
import type { KubeObject, Webhook } from '../src/policy/types.js';

const PODS = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const SPEC = { rules: PODS, failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 10, matchPolicy: 'Equivalent' } as const;

/**
 * Policy-file rules beside the hand-written handlers: a built-in rule, and the typical
 * two-validation `cel` rule (memory-limits of policies/cel.yaml), on the same Pod.
 */
const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: builtin-deny-privileged
    kind: denyPrivileged
  - name: cel-memory-limits
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    params: { maxMemory: 4Gi }
    validations:
      - expression: "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)"
        message: every container needs a memory limit
      - expression: >-
          object.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) ||
            !quantity(c.resources.limits.memory).isGreaterThan(quantity(params.maxMemory)))
        messageExpression: "'memory limits may not exceed ' + params.maxMemory"
`;

function policyWebhooks(): Webhook[] {
  const result = parsePolicy(POLICY, 'bench/webhooks.ts');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.webhooks;
}

/** The webhooks under test: a label check (validate) and a one-label mutation, written as a user would, and the policy rules. */
export function benchWebhooks(): Webhook[] {
  return [
    ...policyWebhooks(),
    {
      ...SPEC,
      name: 'require-labels',
      type: 'validating',
      handler: (request) =>
        request.object?.metadata?.labels?.app ? { allowed: true } : { allowed: false, message: 'pods need an app label' },
    },
    {
      ...SPEC,
      name: 'add-label',
      type: 'mutating',
      handler: (request) => {
        const object = request.object as KubeObject;
        object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, 'policy.example.com/checked': 'true' } };
        return { allowed: true, object };
      },
    },
  ];
}
