import t from 'tap';
import {
  addToleration,
  addVolume,
  computePatch,
  InvalidMetadataError,
  removeAnnotation,
  removeLabel,
  setAnnotation,
  setEnvVar,
  setLabel,
  workloadContainers,
  type k8s,
  type KubeObject,
} from '../src/index.js';

const pod = (): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    initContainers: [{ name: 'setup', image: 'busybox' }],
    containers: [{ name: 'web', image: 'nginx', env: [{ name: 'MODE', value: 'dev' }] }],
    ephemeralContainers: [{ name: 'debugger', image: 'busybox' }],
  },
});

const template = { metadata: { labels: { app: 'job' } }, spec: { containers: [{ name: 'main', image: 'worker' }], restartPolicy: 'Never' } };
const cronJob = (): k8s.V1CronJob => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: structuredClone(template) } } } });
const deployment = (): k8s.V1Deployment => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: { selector: {}, template: structuredClone(template) } });
const statefulSet = (): k8s.V1StatefulSet => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { selector: {}, template: structuredClone(template) } });
const daemonSet = (): k8s.V1DaemonSet => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' }, spec: { selector: {}, template: structuredClone(template) } });
const job = (): k8s.V1Job => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'once' }, spec: { template: structuredClone(template) } });

/** The patch the server would send for an edit: computePatch of the original against the edited copy. */
function patchOf<T extends object>(original: T, edit: (copy: T) => unknown): unknown {
  const copy = structuredClone(original);
  edit(copy);
  return computePatch(original as KubeObject, copy as KubeObject);
}

t.test('labels and annotations: set, replace, remove, JSON pointers escaped, no patch when nothing changes', async (t) => {
  t.same(patchOf(pod(), (p) => setLabel(p, 'app.kubernetes.io/name', 'web')), [{ op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'web' }]);
  t.same(patchOf(pod(), (p) => setLabel(p, 'app', 'api')), [{ op: 'replace', path: '/metadata/labels/app', value: 'api' }]);
  t.same(patchOf(pod(), (p) => setLabel(p, 'app', 'web')), [], 'the same value: no patch');
  t.same(patchOf(pod(), (p) => removeLabel(p, 'app')), [{ op: 'remove', path: '/metadata/labels/app' }]);
  t.same(patchOf(pod(), (p) => removeLabel(p, 'absent')), []);
  t.same(patchOf(pod(), (p) => setAnnotation(p, 'example.com/owner', 'team a')), [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/owner': 'team a' } }]);
  const annotated = setAnnotation(pod(), 'note', 'x');
  t.same(patchOf(annotated, (p) => removeAnnotation(p, 'note')), [{ op: 'remove', path: '/metadata/annotations/note' }]);
  t.same(patchOf({ kind: 'ConfigMap' } as KubeObject, (o) => setLabel(o, 'a', 'b')), [{ op: 'add', path: '/metadata', value: { labels: { a: 'b' } } }], 'no metadata at all');
  t.throws(() => setLabel(pod(), 'bad key!', 'x'), InvalidMetadataError);
  t.throws(() => setLabel(pod(), 'ok', 'not a label value'), /label value "not a label value"/);
  t.throws(() => setAnnotation(pod(), '/x', 'y'), /annotation key "\/x" is not a qualified name/);
});

t.test('workloadContainers finds every container kind in a Pod and the pod template of every workload', async (t) => {
  t.same(workloadContainers(pod()).map((c) => `${c.kind}:${c.name}`), ['init container:setup', 'container:web', 'ephemeral container:debugger']);
  for (const [kind, object] of [['Deployment', deployment()], ['StatefulSet', statefulSet()], ['DaemonSet', daemonSet()], ['Job', job()], ['CronJob', cronJob()]] as const) {
    const found = workloadContainers(object);
    t.same(found.map((c) => c.name), ['main'], kind);
    t.match(found[0]?.podSpec.description, new RegExp(`pod template of ${kind}`), kind);
  }
  t.same(workloadContainers({ apiVersion: 'v1', kind: 'ConfigMap' }), [], 'kinds without pod specs have none');
  t.same(workloadContainers(pod(), ['container']).map((c) => c.name), ['web']);
});

t.test('setEnvVar adds, replaces or leaves each selected container; filters by kind and predicate', async (t) => {
  t.same(patchOf(pod(), (p) => setEnvVar(p, { name: 'MODE', value: 'dev' })), [
    { op: 'add', path: '/spec/ephemeralContainers/0/env', value: [{ name: 'MODE', value: 'dev' }] },
    { op: 'add', path: '/spec/initContainers/0/env', value: [{ name: 'MODE', value: 'dev' }] },
  ], 'the container that has it unchanged');
  t.same(patchOf(pod(), (p) => setEnvVar(p, { name: 'MODE', value: 'prod' }, { kinds: ['container'] })), [{ op: 'replace', path: '/spec/containers/0/env/0/value', value: 'prod' }]);
  t.same(patchOf(cronJob(), (c) => setEnvVar(c, { name: 'TZ', value: 'UTC' }, { where: (ref) => ref.name === 'main' })), [
    { op: 'add', path: '/spec/jobTemplate/spec/template/spec/containers/0/env', value: [{ name: 'TZ', value: 'UTC' }] },
  ]);
  const once = setEnvVar(pod(), { name: 'X', value: '1' });
  t.same(patchOf(once, (p) => setEnvVar(p, { name: 'X', value: '1' })), [], 'idempotent: reinvocation adds nothing');
});

t.test('addToleration adds once per pod spec, operator Equal being the default', async (t) => {
  const toleration = { key: 'dedicated', value: 'batch', effect: 'NoSchedule' };
  t.same(patchOf(deployment(), (d) => addToleration(d, toleration)), [{ op: 'add', path: '/spec/template/spec/tolerations', value: [toleration] }]);
  const tolerated = addToleration(deployment(), { ...toleration, operator: 'Equal' });
  t.same(patchOf(tolerated, (d) => addToleration(d, toleration)), [], 'Equal is what no operator means');
  t.same(patchOf(tolerated, (d) => addToleration(d, { ...toleration, effect: 'NoExecute' })), [
    { op: 'add', path: '/spec/template/spec/tolerations/1', value: { ...toleration, effect: 'NoExecute' } },
  ]);
});

t.test('addVolume adds the volume once and mounts it where no mount has the path', async (t) => {
  const volume = { name: 'cache', emptyDir: {} };
  t.same(patchOf(statefulSet(), (s) => addVolume(s, volume, { mountPath: '/cache' })), [
    { op: 'add', path: '/spec/template/spec/containers/0/volumeMounts', value: [{ name: 'cache', mountPath: '/cache' }] },
    { op: 'add', path: '/spec/template/spec/volumes', value: [volume] },
  ]);
  const once = addVolume(statefulSet(), volume, { mountPath: '/cache', readOnly: true });
  t.same(patchOf(once, (s) => addVolume(s, volume, { mountPath: '/cache', readOnly: true })), []);
  t.same(patchOf(pod(), (p) => addVolume(p, volume)), [{ op: 'add', path: '/spec/volumes', value: [volume] }], 'no mount asked: containers untouched');
});
