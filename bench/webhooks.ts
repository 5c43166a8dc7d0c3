import type { KubeObject, Webhook } from '../src/policy/types.js';

const PODS = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const SPEC = { rules: PODS, failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 10, matchPolicy: 'Equivalent' } as const;

/** The webhooks under test: a label check (validate) and a one-label mutation, written as a user would. */
export function benchWebhooks(): Webhook[] {
  return [
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
