/**
 * `kubectl debug` adds a container through the pods/ephemeralcontainers subresource (an UPDATE of
 * the Pod). The rules that judge containers must be registered for it, or kube-apiserver never
 * calls them and a privileged debug container walks past the policy.
 */
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { writeFile } from 'node:fs/promises';
import t from 'tap';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';

const POLICY = (grouping: 'auto' | 'none'): string => `apiVersion: kube-admission-server/v1
kind: Policy
grouping: ${grouping}
webhooks:
  - name: require-app
    kind: requireLabels
    params: { labels: [{ key: app }] }
  - name: deny-privileged
    kind: denyPrivileged
    params: { deniedCapabilities: [SYS_ADMIN] }
  - name: deny-host-namespaces
    kind: denyHostNamespaces
  - name: allowed-registries
    kind: allowedRegistries
    params: { registries: [registry.k8s.io/] }
  - name: default-resources
    kind: defaultResources
    params: { requests: { cpu: 50m } }
`;

const EPHEMERAL_RULE = { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'], scope: 'Namespaced' };

interface StoredWebhook {
  name: string;
  rules: { resources: string[] }[];
}

/** The running Pod, and the same Pod with a debug container added, as kubectl debug sends it. */
function debugged(debugContainer: Record<string, unknown>, podExtra: Record<string, unknown> = {}): { oldObject: KubeObject; object: KubeObject } {
  const running = podFixture({ app: 'web' }, podExtra);
  running.metadata = { ...running.metadata, uid: 'a1b2', resourceVersion: '42' };
  const object = structuredClone(running);
  (object['spec'] as Record<string, unknown>)['ephemeralContainers'] = [{ name: 'debugger', targetContainerName: 'app', ...debugContainer }];
  return { oldObject: running, object };
}

for (const grouping of ['none', 'auto'] as const) {
  t.test(`grouping ${grouping}: container rules are registered for pods/ephemeralcontainers and a privileged debug container is denied`, async (t) => {
    const cluster = await ClusterHarness.start(t);
    cluster.seedDeployment(['kas-a']);
    const policyFile = join(cluster.dir, 'policy.yaml');
    await writeFile(policyFile, POLICY(grouping));
    const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', policyFile]);
    await replica.child.waitForMessage('registered as the leader');

    // Read back from the API what kube-apiserver would match requests against.
    const registered = [
      ...(cluster.configuration<{ webhooks: StoredWebhook[] }>('validating')?.webhooks ?? []),
      ...(cluster.configuration<{ webhooks: StoredWebhook[] }>('mutating')?.webhooks ?? []),
    ];
    const coversDebug = (prefix: string): boolean => registered.find((w) => w.name.startsWith(`${prefix}.`))!.rules.some((r) => r.resources.includes('pods/ephemeralcontainers'));
    if (grouping === 'none') {
      for (const name of ['deny-privileged', 'allowed-registries']) {
        const webhook = registered.find((w) => w.name.startsWith(`${name}.`));
        t.ok(webhook?.rules.some((rule) => isDeepStrictEqual(rule, EPHEMERAL_RULE)), `${name} is registered for UPDATE on pods/ephemeralcontainers: ${JSON.stringify(webhook?.rules)}`);
      }
      // Nothing these judge can change on the subresource: host namespaces are Pod fields, ephemeral
      // containers may have no ports or resources, and the Pod's labels do not change there.
      for (const name of ['require-app', 'deny-host-namespaces', 'default-resources']) t.notOk(coversDebug(name), `${name} is not`);
    } else {
      const group = registered.find((w) => w.name.startsWith('validating-fail-t5.'));
      t.ok(group?.rules.some((rule) => isDeepStrictEqual(rule, EPHEMERAL_RULE)), `the validating group is registered for UPDATE on pods/ephemeralcontainers (its container rules want it): ${JSON.stringify(group?.rules)}`);
      t.notOk(coversDebug('mutating-ignore-t5'), 'the mutating group is not (default-resources does not want it)');
    }

    const caller = cluster.caller(t, () => replica.port);
    const debug = (container: Record<string, unknown>, podExtra?: Record<string, unknown>) =>
      caller.admit({ operation: 'UPDATE', subResource: 'ephemeralcontainers', kind: POD_KIND, resource: POD_RESOURCE, ...debugged(container, podExtra) });

    const privileged = await debug({ image: 'registry.k8s.io/busybox:1.36', securityContext: { privileged: true } });
    t.equal(privileged.allowed, false, 'a privileged debug container is denied');
    if (!privileged.allowed) {
      t.equal(privileged.status.code, 403);
      const by = grouping === 'none' ? /admission webhook "deny-privileged\.kube-admission-server\.kas\.svc" denied the request: / : /admission webhook "validating-fail-t5\.kube-admission-server\.kas\.svc" denied the request: deny-privileged: /;
      t.match(privileged.status.message, new RegExp(`${by.source}ephemeral container "debugger" sets securityContext\\.privileged: true`));
    }
    const sysAdmin = await debug({ image: 'registry.k8s.io/busybox:1.36', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } });
    t.equal(sysAdmin.allowed, false, 'a denied capability is refused too');
    const foreign = await debug({ image: 'docker.io/library/busybox' });
    t.equal(foreign.allowed, false, 'a debug image from a registry that is not allowed is denied');
    if (!foreign.allowed) t.match(foreign.status.message, /allowed-registries.*ephemeral container "debugger" image "docker\.io\/library\/busybox" is not from an allowed registry/);

    const plain = await debug({ image: 'registry.k8s.io/busybox:1.36' });
    t.same(plain.allowed && { warnings: plain.warnings, annotations: plain.auditAnnotations }, { warnings: [], annotations: {} }, 'a plain debug container is allowed');
    const intoPrivilegedPod = await debug({ image: 'registry.k8s.io/busybox:1.36' }, { securityContext: { privileged: true } });
    t.equal(intoPrivilegedPod.allowed, true, 'debugging a pod admitted earlier is judged on what the update adds, as every UPDATE');

    const calledFor = caller.calls.filter((c) => c.phase === 'validating').map((c) => c.webhook.split('.')[0]);
    t.equal((await replica.child.stop()).code, 0);
    if (grouping === 'none') t.same([...new Set(calledFor)].sort(), ['allowed-registries', 'deny-privileged'], 'kube-apiserver calls exactly the container rules for the subresource');
    else {
      t.same([...new Set(calledFor)], ['validating-fail-t5'], 'kube-apiserver calls the group');
      // Denials are logged at info with the members that ran (the process has exited: every line is read).
      const ran = replica.child.logs.filter((l) => l.msg === 'admission review' && l['webhook'] === 'validating-fail-t5').map((l) => (l['entries'] as { entry: string }[]).map((e) => e.entry));
      t.equal(ran.length, 3, 'the three denials are logged');
      for (const entries of ran) t.same(entries, ['deny-privileged', 'allowed-registries'], 'and the server runs exactly the container rules of it');
    }
  });
}
