/** A realistic Pod CREATE review (~1 KB), as kube-apiserver sends it to a mutating webhook. */
export function podCreateReview(): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '3f33db0e-e2bf-4ccc-812f-b712a66f202d',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web-7d4b9c8f6-x2k9p',
      namespace: 'team-a',
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        groups: ['system:serviceaccounts', 'system:authenticated'],
      },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'web-7d4b9c8f6-x2k9p',
          generateName: 'web-7d4b9c8f6-',
          namespace: 'team-a',
          creationTimestamp: null,
          labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6', tier: 'frontend' },
        },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/team-a/web:1.4.2',
              ports: [{ containerPort: 8080, protocol: 'TCP' }],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Always',
          serviceAccountName: 'default',
        },
        status: {},
      },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}
