/**
 * The 30-rule policy of the grouping benchmark: built-in rules and CEL rules,
 * enforcing and warning ones mixed, three mutations; the kind of policy a platform team grows to.
 * The benchmark Pod passes every enforcing rule (so it is stored) and trips most warning ones.
 */

const PODS = '[{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]';

/** A `kind: cel` entry with one validation over the Pod. */
const cel = (name: string, mode: 'enforce' | 'warn', expression: string, message: string): string =>
  `  - name: ${name}\n    kind: cel\n    mode: ${mode}\n    rules: ${PODS}\n    validations:\n      - expression: ${JSON.stringify(expression)}\n        message: ${JSON.stringify(message)}\n`;

const ALL_CONTAINERS = 'object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])';

const MUTATING = [
  '  - name: default-labels\n    kind: defaultLabels\n    params: { labels: { platform.example.com/defaulted: "true" } }\n',
  '  - name: default-resources\n    kind: defaultResources\n    params: { requests: { cpu: 50m, memory: 64Mi } }\n',
  '  - name: default-annotations\n    kind: defaultLabels\n    params: { annotations: { platform.example.com/policy: bench } }\n',
];

const ENFORCING = [
  '  - name: deny-privileged\n    kind: denyPrivileged\n    params: { allowPrivilegeEscalation: true, deniedCapabilities: [SYS_ADMIN, NET_ADMIN, ALL] }\n',
  '  - name: deny-host-namespaces\n    kind: denyHostNamespaces\n',
  '  - name: allowed-registries\n    kind: allowedRegistries\n    params: { registries: [registry.k8s.io/, ghcr.io/] }\n',
  '  - name: require-team\n    kind: requireLabels\n    params: { labels: [{ key: team }] }\n',
  '  - name: require-app\n    kind: requireLabels\n    params: { labels: [{ key: app, pattern: "[a-z0-9]([-a-z0-9]*[a-z0-9])?" }] }\n',
  cel('memory-limits', 'enforce', "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)", 'every container needs a memory limit'),
  cel('no-latest-tag', 'enforce', `(${ALL_CONTAINERS}).all(c, !c.image.endsWith(':latest'))`, 'images must not use the latest tag'),
  cel('no-host-path', 'enforce', '!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))', 'hostPath volumes are not allowed'),
  cel('run-as-non-root', 'enforce', "(has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot) || object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.runAsNonRoot) && c.securityContext.runAsNonRoot)", 'containers must run as non-root'),
  cel('no-privilege-escalation', 'enforce', 'object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && !c.securityContext.allowPrivilegeEscalation)', 'set allowPrivilegeEscalation: false'),
  cel('max-containers', 'enforce', 'size(object.spec.containers) <= 10', 'at most 10 containers'),
  cel('no-host-ports', 'enforce', `(${ALL_CONTAINERS}).all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))`, 'hostPort is not allowed'),
  cel('default-proc-mount', 'enforce', "object.spec.containers.all(c, !has(c.securityContext) || !has(c.securityContext.procMount) || c.securityContext.procMount == 'Default')", 'procMount must be Default'),
];

const WARNING = [
  '  - name: require-owner\n    kind: requireLabels\n    mode: warn\n    params: { labels: [{ key: owner }] }\n',
  '  - name: require-cost-center\n    kind: requireLabels\n    mode: audit\n    params: { labels: [{ key: cost-center }] }\n',
  cel('cpu-limits', 'warn', "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'cpu' in c.resources.limits)", 'set a cpu limit'),
  cel('readiness-probe', 'warn', 'object.spec.containers.all(c, has(c.readinessProbe))', 'add a readinessProbe'),
  cel('liveness-probe', 'warn', 'object.spec.containers.all(c, has(c.livenessProbe))', 'add a livenessProbe'),
  cel('read-only-root', 'warn', 'object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.readOnlyRootFilesystem) && c.securityContext.readOnlyRootFilesystem)', 'use a read-only root filesystem'),
  cel('pinned-digest', 'warn', "object.spec.containers.all(c, c.image.contains('@sha256:'))", 'pin images by digest'),
  cel('seccomp-runtime-default', 'warn', "has(object.spec.securityContext) && has(object.spec.securityContext.seccompProfile) && object.spec.securityContext.seccompProfile.type == 'RuntimeDefault'", 'use the RuntimeDefault seccomp profile'),
  cel('drop-all-capabilities', 'warn', "object.spec.containers.all(c, has(c.securityContext) && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.drop) && 'ALL' in c.securityContext.capabilities.drop)", 'drop ALL capabilities'),
  cel('own-service-account', 'warn', "has(object.spec.serviceAccountName) && object.spec.serviceAccountName != 'default'", 'use a service account of your own'),
  cel('priority-class', 'warn', 'has(object.spec.priorityClassName)', 'set a priorityClassName'),
  cel('memory-requests', 'warn', "object.spec.containers.all(c, has(c.resources) && has(c.resources.requests) && 'memory' in c.resources.requests)", 'set a memory request'),
  cel('topology-spread', 'warn', 'has(object.spec.topologySpreadConstraints)', 'spread replicas with topologySpreadConstraints'),
  cel('termination-grace', 'warn', '!has(object.spec.terminationGracePeriodSeconds) || object.spec.terminationGracePeriodSeconds <= 60', 'keep terminationGracePeriodSeconds at 60 or less'),
];

export type GroupingVariant = 'auto' | 'none' | 'auto-warn-fail';

/** The policy file's text: `auto-warn-fail` is grouped with the warning rules set to failurePolicy Fail. */
export function groupingBenchPolicy(variant: GroupingVariant): string {
  const grouping = variant === 'none' ? 'none' : 'auto';
  const warning = variant === 'auto-warn-fail' ? WARNING.map((entry) => entry.replace(/(\n {4}kind: \w+\n)/, '$1    failurePolicy: Fail\n')) : WARNING;
  return `apiVersion: kube-admission-server/v1\nkind: Policy\ngrouping: ${grouping}\nexcludedNamespaces: [kube-system]\nwebhooks:\n${[...MUTATING, ...ENFORCING, ...warning].join('')}`;
}

export const GROUPING_BENCH_RULES = MUTATING.length + ENFORCING.length + WARNING.length;

/** The Pod created: it passes every enforcing rule and trips most warning ones. */
export function benchPod(name: string, namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'bench', team: 'platform' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.9',
          resources: { limits: { memory: '64Mi' } },
          securityContext: { allowPrivilegeEscalation: false, runAsNonRoot: true },
        },
      ],
    },
  };
}
