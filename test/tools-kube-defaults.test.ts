// evaluate and test send what kube-apiserver would send, not what the file says:
// explicit nulls dropped, the built-in kinds' defaults applied (the published OpenAPI of
// Kubernetes 1.35 and its Go defaulters, generated into src/kube/evaluation/kube-defaults/), quantities as
// strings, and metadata as each admission phase carries it. Expected values are those of
// Kubernetes' own defaulting tests (pkg/apis/apps/v1 and core/v1 defaults_test.go), cited per case.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { asDecodedByKubeApiserver, DEFAULTS_KUBERNETES_VERSION } from '../src/kube/evaluation/kube-defaults/apply-defaults.js';
import { imageTag } from '../src/kube/evaluation/kube-defaults/procedural.js';
import { parseGoFunctions, translateDefaulter, type Untranslated } from '../scripts/kube-schema/go-defaulters.js';
import type { SchemaTypes } from '../src/kube/evaluation/kube-defaults/schema-types.js';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const deployment = (spec: Obj): Obj => asDecodedByKubeApiserver({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec });
// TestSetDefaultDeployment's defaultTemplate: what every pod template gets.
const DEFAULT_TEMPLATE_SPEC = { dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', securityContext: {}, terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler' };

t.test('the data names the Kubernetes release it was generated from', async (t) => {
  t.equal(DEFAULTS_KUBERNETES_VERSION, '1.35');
});

t.test('Deployments as apps/v1 TestSetDefaultDeployment expects them', async (t) => {
  const empty = deployment({});
  t.same(
    { ...empty.spec, template: undefined },
    { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, template: undefined },
    'an empty spec',
  );
  t.match(empty.spec.template.spec, DEFAULT_TEMPLATE_SPEC, 'the template spec');
  t.same(empty.status, {}, 'status {} as Go always writes it');

  const surge = deployment({ replicas: 5, strategy: { rollingUpdate: { maxSurge: 5 } } });
  t.same(surge.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 5, maxUnavailable: '25%' } }, 'replicas 5, maxSurge 5: the rest defaulted');
  t.equal(surge.spec.replicas, 5);

  // RollingUpdate: nil in the Go test; Helm writes it as an explicit null.
  const nulled = deployment({ replicas: 3, strategy: { type: 'RollingUpdate', rollingUpdate: null } });
  t.same(nulled.spec.strategy.rollingUpdate, { maxSurge: '25%', maxUnavailable: '25%' }, 'rollingUpdate: null is no rollingUpdate');

  const recreate = deployment({ replicas: 5, strategy: { type: 'Recreate' }, revisionHistoryLimit: 0 });
  t.same(recreate.spec.strategy, { type: 'Recreate' }, 'Recreate gets no rollingUpdate');
  t.equal(recreate.spec.revisionHistoryLimit, 0, 'an explicit 0 stays');
  t.equal(recreate.spec.progressDeadlineSeconds, 600);

  const kept = deployment({ replicas: 5, strategy: { type: 'Recreate' }, progressDeadlineSeconds: 30, revisionHistoryLimit: 2 });
  t.same([kept.spec.progressDeadlineSeconds, kept.spec.revisionHistoryLimit], [30, 2]);
});

t.test('Pods: requests default to limits (TestSetDefaultRequestsPod), templates do not (TestDefaultRequestIsNotSetForReplicaSet)', async (t) => {
  const container = { name: 'c', image: 'busybox', resources: { requests: { memory: '0' }, limits: { cpu: '100m', memory: '1Gi' } } };
  const pod = asDecodedByKubeApiserver<Obj>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [container], initContainers: [container] } });
  for (const list of ['containers', 'initContainers']) {
    t.same(pod.spec[list][0].resources.requests, { memory: '0', cpu: '100m' }, `${list}: cpu request from the limit, the explicit memory 0 kept`);
  }
  t.equal(pod.spec.enableServiceLinks, true, 'SetDefaults_Pod: enableServiceLinks');

  const rs = asDecodedByKubeApiserver<Obj>({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs' },
    spec: { replicas: 3, template: { metadata: { labels: { foo: 'bar' } }, spec: { containers: [{ name: 'c', resources: { limits: { cpu: '100m' } } }] } } },
  });
  t.notOk('requests' in rs.spec.template.spec.containers[0].resources, 'a pod template keeps no requests');
  t.notOk('enableServiceLinks' in rs.spec.template.spec, 'nor enableServiceLinks (SetDefaults_Pod, not PodSpec)');
});

t.test('containers, probes, Services, Namespaces, Secrets and ConfigMaps as core/v1 defaults them', async (t) => {
  const pod = asDecodedByKubeApiserver<Obj>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: {
      containers: [
        { name: 'a', image: 'nginx', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } } },
        { name: 'b', image: 'registry.example:5000/team/app:1.2' },
        { name: 'c', image: 'registry.example/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' },
        { name: 'd', image: 'nginx:latest' },
      ],
    },
  });
  const [a, b, c, d] = pod.spec.containers;
  t.same([a.imagePullPolicy, b.imagePullPolicy, c.imagePullPolicy, d.imagePullPolicy], ['Always', 'IfNotPresent', 'IfNotPresent', 'Always'], 'pull policy by tag');
  t.same([a.terminationMessagePath, a.terminationMessagePolicy], ['/dev/termination-log', 'File']);
  t.same(a.ports, [{ containerPort: 80, protocol: 'TCP' }], 'protocol TCP: the OpenAPI default of ContainerPort');
  t.same(a.resources, {}, 'resources {} as Go always writes it');
  t.same(a.livenessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 }, 'TestSetDefaultProbe');

  // TestSetDefaultServiceTargetPort
  const service = (port: Obj): Obj => asDecodedByKubeApiserver<Obj>({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [port] } });
  t.equal(service({ port: 1234 }).spec.ports[0].targetPort, 1234, 'targetPort defaults to port');
  t.equal(service({ port: 1234, targetPort: 5678 }).spec.ports[0].targetPort, 5678, 'an explicit targetPort stays');
  t.match(service({ port: 80 }).spec, { type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' });

  const namespace = asDecodedByKubeApiserver<Obj>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  t.same(namespace.metadata.labels, { 'kubernetes.io/metadata.name': 'shop' }, 'TestSetDefaultNamespace: the name label');
  t.equal(namespace.status.phase, 'Active');
  t.equal(asDecodedByKubeApiserver<Obj>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }).type, 'Opaque', 'TestSetDefaultSecret');
  t.same(asDecodedByKubeApiserver<Obj>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }).data, {}, 'a ConfigMap without data gets {}');
});

t.test('imageTag reads a reference as parsers.ParseImageName does', async (t) => {
  t.same(
    ['nginx', 'nginx:1.25', 'localhost:5000/nginx', 'localhost:5000/nginx:latest', 'nginx@sha256:abc', 'nginx:1.2@sha256:abc', '', 'UPPER case'].map(imageTag),
    ['latest', '1.25', 'latest', 'latest', '', '1.2', '', ''],
  );
});

t.test('explicit nulls are dropped the way decoding drops them; quantities become strings', async (t) => {
  const helm = asDecodedByKubeApiserver<Obj>({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', annotations: null, labels: { app: 'web', tier: null } },
    spec: {
      replicas: null,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { nodeSelector: null, tolerations: null, containers: [{ name: 'web', image: 'web:1', env: null, resources: { limits: { cpu: 2, memory: null }, requests: null } }] },
      },
    },
  });
  t.notOk('annotations' in helm.metadata);
  t.same(helm.metadata.labels, { app: 'web', tier: '' }, 'a null label value decodes to ""');
  t.equal(helm.spec.replicas, 1, 'replicas: null is no replicas, so 1');
  t.notOk('nodeSelector' in helm.spec.template.spec || 'tolerations' in helm.spec.template.spec || 'env' in helm.spec.template.spec.containers[0]);
  t.same(helm.spec.template.spec.containers[0].resources, { limits: { cpu: '2', memory: '' } }, 'cpu: 2 arrives as "2"');

  const custom = asDecodedByKubeApiserver<Obj>({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: null, parts: [{ a: null, b: 1 }] } });
  t.same(custom, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { parts: [{ b: 1 }] } }, 'a custom resource only loses its nulls');
});

t.test('the generator translates defaulter shapes into data, and leaves out whole what it cannot read', async (t) => {
  const types: SchemaTypes = {
    'io.k8s.api.example.v1.Widget': { f: { spec: { r: 'io.k8s.api.example.v1.WidgetSpec' }, metadata: { r: 'meta' } } },
    'io.k8s.api.example.v1.WidgetSpec': { f: { size: { t: 'integer' }, mode: { t: 'string' }, parts: { i: { r: 'io.k8s.api.example.v1.Part' } }, extra: { r: 'io.k8s.api.example.v1.Extra' } } },
    'io.k8s.api.example.v1.Part': { f: { kind: { t: 'string' }, port: { t: 'integer' }, target: { t: 'int-or-string' } } },
    'io.k8s.api.example.v1.Extra': { f: { level: { t: 'integer' } } },
    meta: { f: { name: { t: 'string' }, labels: { m: { t: 'string' } } } },
  };
  const source = `package v1
import (
	examplev1 "k8s.io/api/example/v1"
)
func SetDefaults_Widget(obj *examplev1.Widget) {
	if obj.Spec.Size == nil {
		obj.Spec.Size = new(int32)
		*obj.Spec.Size = 3
	}
	spec := &obj.Spec
	if spec.Mode == "" {
		spec.Mode = examplev1.ModeFast
	}
	if spec.Mode == examplev1.ModeFast && spec.Extra == nil {
		spec.Extra = &examplev1.Extra{Level: 2}
	}
	for i := range obj.Spec.Parts {
		p := &obj.Spec.Parts[i]
		if p.Target == intstr.FromInt32(0) {
			p.Target = intstr.FromInt32(p.Port)
		}
	}
	if len(obj.Name) > 0 {
		obj.Labels[examplev1.NameLabel] = obj.Name
	}
	if helper.Decide(obj) {
		obj.Spec.Mode = "slow"
	}
}
`;
  const constants: Record<string, string> = { ModeFast: 'Fast', NameLabel: 'example.com/name' };
  const untranslated: Untranslated[] = [];
  const [fn] = parseGoFunctions(source);
  const ops = translateDefaulter(
    { types, definitionOf: (pkg, name) => (pkg === 'examplev1' ? `io.k8s.api.example.v1.${name}` : undefined), constant: (pkg, name) => (pkg === 'examplev1' ? constants[name] : undefined), featureGateOn: () => false, gatesSeen: new Map() },
    fn!,
    'io.k8s.api.example.v1.Widget',
    untranslated,
  );
  t.same(ops, [
    { if: { absent: ['spec', 'size'] }, then: [{ set: ['spec', 'size'], value: 3 }] },
    { if: { zero: ['spec', 'mode'] }, then: [{ set: ['spec', 'mode'], value: 'Fast' }] },
    { if: { all: [{ equals: ['spec', 'mode'], value: 'Fast' }, { absent: ['spec', 'extra'] }] }, then: [{ set: ['spec', 'extra'], value: { level: 2 } }] },
    { each: ['spec', 'parts'], do: [{ if: { zero: ['target'] }, then: [{ copy: ['port'], to: ['target'] }] }] },
    { if: { nonzero: ['metadata', 'name'] }, then: [{ copy: ['metadata', 'name'], to: ['metadata', 'labels', 'example.com/name'] }] },
  ]);
  t.match(untranslated, [{ statement: 'if helper.Decide(obj) {', reason: /helper\.Decide/ }], 'a call it cannot read: the whole if is left out, and said');
});

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: enough-replicas
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }]
    validations:
      - expression: "object.spec.replicas == 1 && object.spec.strategy.rollingUpdate.maxSurge == '25%' && object.spec.template.spec.containers.all(c, c.resources.limits.cpu == '2' && !has(c.resources.requests))"
        message: the defaulted Deployment is not what kube-apiserver sends
      - expression: "!has(object.metadata.annotations) && object.metadata.labels.tier == ''"
        message: explicit nulls reached the rule
  - name: validating-phase
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.metadata.uid != '' && object.metadata.creationTimestamp != '' && object.metadata.name.startsWith('worker-') && size(object.metadata.name) == 12 && request.name == object.metadata.name"
        message: the validating phase does not carry uid, creationTimestamp and the generated name
      - expression: "object.spec.containers[0].imagePullPolicy == 'Always' && object.spec.containers[0].resources.requests.cpu == '500m'"
        message: the Pod was not defaulted
`;

t.test('evaluate: a rule reading defaulted fields and a Helm-style manifest with nulls, and the validating phase', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(
    join(dir, 'objects.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: shop, annotations: null, labels: { app: web, tier: null } }
spec:
  replicas: null
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { nodeSelector: null, containers: [{ name: web, image: web, resources: { limits: { cpu: 2 } } }] }
---
apiVersion: v1
kind: Pod
metadata: { generateName: worker-, namespace: shop }
spec: { containers: [{ name: w, image: worker, resources: { limits: { cpu: 500m } } }] }
`,
  );
  const run = await runToolInProcess(['evaluate', '--policy-file', join(dir, 'policy.yaml'), '-f', join(dir, 'objects.yaml'), '-o', 'json']);
  const report = JSON.parse(run.stdout) as { objects: { allowed: boolean; webhooks: { webhook: string; decision: string; message?: string }[] }[] };
  t.same(
    report.objects.map((o) => o.webhooks.filter((w) => w.decision !== 'skipped').map((w) => `${w.webhook}: ${w.decision}${w.message ? ` ${w.message}` : ''}`)),
    [['enough-replicas: allowed'], ['validating-phase: allowed']],
    run.stderr,
  );
  t.equal(run.code, 0);
});
