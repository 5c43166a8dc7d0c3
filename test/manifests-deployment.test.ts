import t, { type Test } from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IIoK8sApiCoreV1Probe as Probe } from 'kubernetes-models/v1/Probe';
import { renderInstalls } from './support/manifests/installs.js';
import { findObject, objectsOfKind, type KubeObject } from '../local-cluster/util/kube-object.js';
import { allContainers, asDeployment, durationMs, envValue, podSpecOf, type Container } from './support/manifests/workload.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NAME = 'kube-admission-server';
const WEBHOOK_PORT = 8443;
const HEALTH_PORT = 8080;
const SELF_CHECK_TIMEOUT_MS = 30_000;

// Every install the repository ships, kustomize and Helm alike, is held to the same checks.
const rendered = new Map<string, KubeObject[]>();
/** Which kustomization an install corresponds to: itself, or the chart render's counterpart. */
const flavour = new Map<string, string>();
t.before(async () => {
  for (const install of await renderInstalls(ROOT)) {
    rendered.set(install.name, install.objects);
    flavour.set(install.name, install.counterpart ?? install.name);
  }
});
const objectsOf = (name: string): KubeObject[] => {
  const objects = rendered.get(name);
  if (!objects) throw new Error(`install ${name} was not rendered`);
  return objects;
};
const installsLike = (kustomization: string): string[] => [...rendered.keys()].filter((name) => flavour.get(name) === kustomization);
const deploymentOf = (name: string) => asDeployment(findObject(objectsOf(name), 'Deployment', NAME));
const serverContainer = (name: string): Container => {
  const container = podSpecOf(deploymentOf(name)).containers.find((c) => c.name === 'server');
  if (!container) throw new Error(`${name}: no container named server`);
  return container;
};

/** The container port a probe's named or numbered port resolves to. */
function probePort(probe: Probe | undefined, container: Container): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

t.test('every container in every install is locked down', async (t) => {
  for (const name of rendered.keys()) {
    const spec = podSpecOf(deploymentOf(name));
    t.equal(spec.securityContext?.runAsNonRoot, true, `${name}: pod runAsNonRoot`);
    t.equal(spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${name}: pod seccomp RuntimeDefault`);
    for (const container of allContainers(spec)) {
      const sc = container.securityContext;
      const label = `${name}/${container.name}`;
      t.equal(sc?.runAsNonRoot, true, `${label}: runAsNonRoot`);
      t.ok((sc?.runAsUser ?? spec.securityContext?.runAsUser ?? 0) > 0, `${label}: a non-zero uid`);
      t.equal(sc?.readOnlyRootFilesystem, true, `${label}: read-only root filesystem`);
      t.equal(sc?.allowPrivilegeEscalation, false, `${label}: no privilege escalation`);
      t.same(sc?.capabilities?.drop, ['ALL'], `${label}: all capabilities dropped`);
      t.same(sc?.capabilities?.add ?? [], [], `${label}: none added back`);
      t.equal(sc?.seccompProfile?.type ?? spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${label}: seccomp RuntimeDefault`);
      t.ok(container.resources?.requests?.['cpu'] && container.resources.requests['memory'], `${label}: cpu and memory requests`);
      t.ok(container.resources?.limits?.['cpu'] && container.resources.limits['memory'], `${label}: cpu and memory limits`);
    }
    const tmp = serverContainer(name).volumeMounts?.find((m) => m.mountPath === '/tmp');
    const tmpVolume = spec.volumes?.find((v) => v.name === tmp?.name);
    t.ok(tmpVolume?.emptyDir, `${name}: /tmp is a writable emptyDir beside the read-only root`);
  }
});

t.test('rolling updates and disruptions never take the last serving replica', async (t) => {
  t.ok(installsLike('base').length >= 2 && installsLike('single-replica').length >= 2, 'kustomize and Helm installs of each');
  for (const name of installsLike('base')) {
    const base = deploymentOf(name);
    t.equal(base.spec?.replicas, 2, `${name}: two replicas`);
    t.equal(base.spec?.strategy?.type, 'RollingUpdate');
    t.equal(base.spec?.strategy?.rollingUpdate?.maxUnavailable, 0, `${name}: maxUnavailable 0`);
    t.ok(Number(base.spec?.strategy?.rollingUpdate?.maxSurge) >= 1, `${name}: a surge pod is what lets the rollout progress`);

    const spread = podSpecOf(base).topologySpreadConstraints ?? [];
    const byHost = spread.find((c) => c.topologyKey === 'kubernetes.io/hostname');
    t.ok(byHost, `${name}: replicas spread across nodes`);
    t.same(byHost?.labelSelector?.matchLabels, base.spec?.selector.matchLabels, `${name}: the spread counts this Deployment’s pods`);

    const pdb = findObject(objectsOf(name), 'PodDisruptionBudget', NAME);
    const pdbSpec = pdb['spec'] as { maxUnavailable?: number; minAvailable?: number; selector: { matchLabels: Record<string, string> } };
    t.same(pdbSpec.selector.matchLabels, base.spec?.selector.matchLabels, `${name}: the budget selects the pods`);
    t.equal(pdbSpec.maxUnavailable, 1, `${name}: drains take one replica at a time`);
    t.equal(pdbSpec.minAvailable, undefined);
  }
  for (const name of installsLike('single-replica')) {
    t.equal(deploymentOf(name).spec?.replicas, 1, `${name}: one replica`);
    // With one replica a budget demanding an available pod would block every drain.
    t.same(objectsOfKind(objectsOf(name), 'PodDisruptionBudget'), [], `${name} ships no budget`);
  }
});

t.test('probes use the health port and the startup probe outlasts the self-check', async (t) => {
  for (const name of rendered.keys()) {
    const container = serverContainer(name);
    t.same(
      container.ports?.map((p) => [p.name, p.containerPort]).sort(),
      [
        ['health', HEALTH_PORT],
        ['https', WEBHOOK_PORT],
      ],
      `${name}: ports`,
    );
    t.equal(probePort(container.livenessProbe, container), HEALTH_PORT, `${name}: liveness on the health port`);
    t.equal(container.livenessProbe?.httpGet?.path, '/healthz', `${name}: liveness /healthz`);
    t.equal(probePort(container.readinessProbe, container), HEALTH_PORT, `${name}: readiness on the health port`);
    t.equal(container.readinessProbe?.httpGet?.path, '/readyz', `${name}: readiness /readyz`);
    const startup = container.startupProbe;
    t.equal(probePort(startup, container), HEALTH_PORT, `${name}: startup on the health port`);
    t.match(startup?.httpGet?.path ?? '', /^\/(healthz|readyz)$/, `${name}: startup path`);
    const startupBudgetMs = (startup?.periodSeconds ?? 10) * (startup?.failureThreshold ?? 3) * 1000;
    const selfCheckMs = durationMs(envValue(container, 'SELF_CHECK_TIMEOUT') ?? '30s');
    t.equal(selfCheckMs, SELF_CHECK_TIMEOUT_MS, `${name}: the self-check deadline the probe was sized for`);
    t.ok(startupBudgetMs >= selfCheckMs + 10_000, `${name}: startup probe budget ${startupBudgetMs} ms covers the ${selfCheckMs} ms self-check with margin`);
  }
});

t.test('the kubelet waits for the whole graceful shutdown before SIGKILL', async (t) => {
  for (const name of rendered.keys()) {
    const container = serverContainer(name);
    const delayMs = durationMs(envValue(container, 'SHUTDOWN_DELAY') ?? 'missing');
    const timeoutMs = durationMs(envValue(container, 'SHUTDOWN_TIMEOUT') ?? 'missing');
    t.ok(delayMs > 0, `${name}: a shutdown delay for endpoint propagation`);
    t.equal(timeoutMs, 5000, `${name}: the 5 s shutdown deadline`);
    const graceSeconds = podSpecOf(deploymentOf(name)).terminationGracePeriodSeconds ?? 30;
    t.ok(graceSeconds * 1000 >= delayMs + timeoutMs + 2000, `${name}: grace ${graceSeconds} s >= delay + timeout + 2 s`);
  }
});

t.test('a fail-closed webhook is not the first pod preempted or evicted', async (t) => {
  for (const name of rendered.keys()) {
    t.equal(podSpecOf(deploymentOf(name)).priorityClassName, 'system-cluster-critical', `${name}: system-cluster-critical`);
  }
});

t.test('the image is this version of the server', async (t) => {
  const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const name of rendered.keys()) {
    const container = serverContainer(name);
    // The custom-handlers install serves an image of your own, FROM this version's.
    const image = name.endsWith('custom-handlers') ? 'registry.example.com/my-webhooks:1.0.0' : `kube-admission-server:${version}`;
    t.equal(container.image, image, `${name}: tag = package.json version (override with kustomize images)`);
    t.equal(container.imagePullPolicy, 'IfNotPresent', `${name}: a pinned tag needs no Always pull`);
  }
});

t.test('environment: identity from the downward API and the interface’s variables', async (t) => {
  for (const name of rendered.keys()) {
    const container = serverContainer(name);
    const fieldRef = (variable: string) => container.env?.find((e) => e.name === variable)?.valueFrom?.fieldRef?.fieldPath;
    t.equal(fieldRef('POD_NAMESPACE'), 'metadata.namespace', `${name}: POD_NAMESPACE`);
    t.equal(fieldRef('POD_NAME'), 'metadata.name', `${name}: POD_NAME`);
    t.equal(envValue(container, 'WEBHOOK_SERVICE_NAME'), NAME, `${name}: service name`);
    t.equal(envValue(container, 'OWNER_CLUSTER_ROLE'), NAME, `${name}: owner ClusterRole`);
    t.ok(findObject(objectsOf(name), 'ClusterRole', envValue(container, 'OWNER_CLUSTER_ROLE') ?? ''), `${name}: the owner ClusterRole is installed`);
    const names = (container.env ?? []).map((e) => e.name);
    t.same(names, [...new Set(names)], `${name}: no variable set twice`);
  }
});

t.test('the policy is mounted as a directory so ConfigMap updates reach the server', async (t) => {
  for (const name of rendered.keys()) {
    const spec = podSpecOf(deploymentOf(name));
    const container = serverContainer(name);
    const policyFile = envValue(container, 'POLICY_FILE') ?? '';
    const mount = container.volumeMounts?.find((m) => policyFile.startsWith(`${m.mountPath}/`));
    t.ok(mount, `${name}: POLICY_FILE ${policyFile} lies in a mount`);
    t.equal(mount?.subPath, undefined, `${name}: no subPath (subPath mounts never update)`);
    t.equal(mount?.readOnly, true, `${name}: read-only`);
    const volume = spec.volumes?.find((v) => v.name === mount?.name);
    t.equal(volume?.configMap?.name, 'kube-admission-server-policy', `${name}: the policy ConfigMap`);
    const fileName = policyFile.slice((mount?.mountPath.length ?? 0) + 1);
    const configMap = findObject(objectsOf(name), 'ConfigMap', 'kube-admission-server-policy');
    t.ok((configMap['data'] as Record<string, string>)[fileName], `${name}: the ConfigMap has ${fileName}`);
  }
});

t.test('the Service sends 443 to the webhook port of exactly these pods', async (t) => {
  for (const name of rendered.keys()) {
    const service = findObject(objectsOf(name), 'Service', NAME);
    const spec = service['spec'] as { selector: Record<string, string>; ports: Array<{ name: string; port: number; targetPort: number | string }> };
    t.same(spec.ports.map((p) => [p.name, p.port, p.targetPort]), [['https', 443, WEBHOOK_PORT]], `${name}: 443 -> ${WEBHOOK_PORT}`);
    const podLabels = deploymentOf(name).spec?.template.metadata?.labels ?? {};
    t.ok(Object.keys(spec.selector).length > 0, `${name}: a non-empty selector`);
    t.ok(Object.entries(spec.selector).every(([k, v]) => podLabels[k] === v), `${name}: the selector matches the pod labels`);
  }
});

t.test('generate mode in the base; files mode from cert-manager in its overlay', async (t) => {
  t.ok(installsLike('base').length >= 2 && installsLike('cert-manager').length >= 2, 'kustomize and Helm installs of each');
  for (const name of installsLike('base')) {
    const base = serverContainer(name);
    t.equal(envValue(base, 'TLS_MODE'), 'generate', `${name}: generate mode`);
    t.match(envValue(base, 'CERT_DIR') ?? '', /^\/tmp\//, `${name}: anything written locally lands on the writable emptyDir`);
  }
  for (const name of installsLike('cert-manager')) await t.test(name, (t) => checkCertManagerInstall(t, name));
});

async function checkCertManagerInstall(t: Test, name: string): Promise<void> {
  const objects = objectsOf(name);
  const container = serverContainer(name);
  const spec = podSpecOf(deploymentOf(name));
  t.equal(envValue(container, 'TLS_MODE'), 'files');
  const certDir = envValue(container, 'CERT_DIR');
  const mount = container.volumeMounts?.find((m) => m.mountPath === certDir);
  t.ok(mount, 'CERT_DIR is a mount');
  t.equal(mount?.subPath, undefined, 'a directory mount, so renewals reach the server');
  t.equal(mount?.readOnly, true);
  const secretName = spec.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName;

  const serving = findObject(objects, 'Certificate', 'kube-admission-server-serving-cert');
  const servingSpec = serving['spec'] as { secretName: string; dnsNames: string[]; issuerRef: { name: string; kind: string }; privateKey: { algorithm: string } };
  t.equal(secretName, servingSpec.secretName, 'the mounted Secret is the one cert-manager writes');
  t.ok(servingSpec.dnsNames.includes(`${NAME}.${NAME}.svc`), 'covers the name kube-apiserver verifies');
  t.equal(servingSpec.privateKey.algorithm, 'RSA');

  // The issuer chain resolves: serving cert <- CA issuer <- CA certificate <- self-signed issuer.
  const caIssuer = findObject(objects, servingSpec.issuerRef.kind, servingSpec.issuerRef.name);
  const caSecret = (caIssuer['spec'] as { ca?: { secretName: string } }).ca?.secretName;
  const caCertificate = objectsOfKind(objects, 'Certificate').find((c) => (c['spec'] as { secretName: string }).secretName === caSecret);
  t.ok(caCertificate, 'the CA issuer’s Secret is issued by a Certificate here');
  const caSpec = caCertificate?.['spec'] as { isCA: boolean; issuerRef: { name: string; kind: string } } | undefined;
  t.equal(caSpec?.isCA, true);
  const root = caSpec ? findObject(objects, caSpec.issuerRef.kind, caSpec.issuerRef.name) : undefined;
  t.ok(root && 'selfSigned' in (root['spec'] as object), 'the CA is self-signed');
}
