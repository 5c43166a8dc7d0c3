import { SubjectAccessReviews } from '../src/kube/subject-access-reviews.js';
import type { KubeApi } from '../src/kube/client.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { KubeObject, Webhook } from '../src/admission/types.js';

const PODS = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const SPEC = { rules: PODS, failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 10, matchPolicy: 'Equivalent' } as const;

/**
 * Policy-file rules beside the hand-written handlers: a built-in rule, the typical
 * two-validation `cel` rule (memory-limits of policies/cel.yaml), and a cel rule asking the
 * authorizer, on the same Pod.
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
  - name: cel-authorizer
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()"
        message: only those who may delete Deployments here may create Pods by hand
`;

/**
 * The server's SubjectAccessReviews over an API that allows at once, in process: the review path
 * as in a cluster where the answer is cached (10 s), asked again when it expires.
 */
function allowingReviews(): SubjectAccessReviews {
  const api = { authorization: { createSubjectAccessReview: async () => ({ status: { allowed: true } }) } } as unknown as Pick<KubeApi, 'authorization'>;
  return new SubjectAccessReviews({ api });
}

function policyWebhooks(): Webhook[] {
  const result = parsePolicy(POLICY, 'bench/webhooks.ts', { authorization: allowingReviews() });
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
