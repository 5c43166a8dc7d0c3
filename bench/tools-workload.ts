/**
 * The tools benchmark's inputs: a 25-rule policy of the shapes people port from
 * ValidatingAdmissionPolicies and the built-ins (labels, images, resources, security context,
 * host namespaces, mutations), and Pods that trip some of them.
 */
import type { KubeObject } from '../src/admission/types.js';

const PODS_CREATE = '[{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]';

/** [name, validations] of the cel rules, each with a message. */
const CEL_RULES: [string, string][] = [
  ['memory-limits', "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)"],
  ['cpu-requests', "object.spec.containers.all(c, has(c.resources) && has(c.resources.requests) && 'cpu' in c.resources.requests)"],
  ['max-memory', "object.spec.containers.all(c, !has(c.resources.limits) || !('memory' in c.resources.limits) || !quantity(c.resources.limits.memory).isGreaterThan(quantity('4Gi')))"],
  ['no-latest', "object.spec.containers.all(c, !c.image.endsWith(':latest'))"],
  ['pinned', "object.spec.containers.all(c, c.image.contains('@') || c.image.contains(':'))"],
  ['run-as-non-root', "has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot"],
  ['no-privilege-escalation', "object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && !c.securityContext.allowPrivilegeEscalation)"],
  ['drop-all', "object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.drop) && 'ALL' in c.securityContext.capabilities.drop)"],
  ['read-only-root', "object.spec.containers.all(c, c.?securityContext.?readOnlyRootFilesystem.orValue(false))"],
  ['team-label', "has(object.metadata.labels) && 'team' in object.metadata.labels"],
  ['app-label-format', "!has(object.metadata.labels) || !('app' in object.metadata.labels) || object.metadata.labels.app.matches('^[a-z][a-z0-9-]*$')"],
  ['no-host-path', "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))"],
  ['no-host-ports', "object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))"],
  ['seccomp', "object.spec.?securityContext.?seccompProfile.?type.orValue('') in ['RuntimeDefault', 'Localhost']"],
  ['max-containers', 'size(object.spec.containers) <= 5'],
  ['probes', "object.spec.containers.all(c, has(c.readinessProbe))"],
  ['no-default-sa', "object.spec.?serviceAccountName.orValue('default') != 'default'"],
  ['image-registry', "object.spec.containers.all(c, c.image.startsWith('registry.example/') || c.image.startsWith('ghcr.io/'))"],
  ['annotations-size', "!has(object.metadata.annotations) || size(object.metadata.annotations) < 20"],
];

/** The policy: 19 cel rules in warn (most findings would otherwise stop at the first denial) and 6 built-ins. */
export function toolsPolicy(): string {
  const cel = CEL_RULES.map(
    ([name, expression]) => `  - name: ${name}
    kind: cel
    mode: warn
    rules: ${PODS_CREATE}
    validations:
      - expression: ${JSON.stringify(expression)}
        message: ${name} is not met`,
  );
  return `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: default-labels
    kind: defaultLabels
    params: { labels: { managed-by: platform } }
  - name: default-resources
    kind: defaultResources
    params: { requests: { cpu: 100m, memory: 128Mi } }
  - name: require-labels
    kind: requireLabels
    mode: warn
    params: { labels: [{ key: app }] }
  - name: deny-privileged
    kind: denyPrivileged
    mode: warn
  - name: deny-host-namespaces
    kind: denyHostNamespaces
    mode: warn
  - name: allowed-registries
    kind: allowedRegistries
    mode: audit
    params: { registries: [registry.example, ghcr.io] }
${cel.join('\n')}
`;
}

/** `n` Pods in `namespaces` namespaces, every tenth with a finding or two. */
export function toolsPods(n: number, namespaces = 20): KubeObject[] {
  return Array.from({ length: n }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: `ns-${i % namespaces}`, labels: { app: `app-${i % 50}`, team: i % 10 === 0 ? undefined : 'shop' } as Record<string, string> },
    spec: {
      serviceAccountName: 'web',
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'web',
          image: i % 10 === 3 ? 'nginx:latest' : 'registry.example/web:1.2.3',
          ports: [{ containerPort: 8080 }],
          resources: { limits: { memory: '512Mi', cpu: '1' }, requests: { memory: '256Mi', cpu: '100m' } },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
        },
        { name: 'sidecar', image: 'ghcr.io/acme/proxy:2', resources: { limits: { memory: '64Mi' }, requests: { cpu: '10m' } }, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
      ],
    },
  })).map((pod) => {
    // JSON round trip: drop the undefined team label as a manifest would not have it.
    return JSON.parse(JSON.stringify(pod)) as KubeObject;
  });
}
