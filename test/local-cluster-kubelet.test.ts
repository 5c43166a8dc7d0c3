// The local kubelet with the compiled server as the container: env with downward-API fields and
// $(VAR) references resolved, paths under volumeMounts translated, ConfigMap volumes written and
// updated the way kubelet writes them, readiness from the probe, a failing liveness probe
// restarting the container, SIGTERM then SIGKILL once terminationGracePeriodSeconds is over.
// The oracle for the process's environment and arguments is the kernel (/proc/<pid>).
import { lstat, mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { ADMIN_USER, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { EVENT_MS, EXIT_MS, STARTUP_MS } from './support/deadline.js';
import { docker, requireEngine, requireImage } from './support/image/docker.js';
import { ClusterClient } from '../local-cluster/cluster/api-client.js';
import { startLocalCluster } from '../local-cluster/cluster/index.js';

const dir = await mkdtemp(join(tmpdir(), 'local-kubelet-'));
/** What the cluster's components logged, in order. */
const logged: string[] = [];
const cluster = await startLocalCluster({
  dir,
  certManager: false,
  log: (message) => {
    logged.push(message);
    t.comment(message);
  },
});
t.teardown(async () => {
  await cluster.close(2);
  await rm(dir, { recursive: true, force: true });
});
const api = cluster.api;
const admin = new ClusterClient(api, ADMIN_USER);
const NS = 'node-test';
const GRACE_SECONDS = EXIT_MS / 1000;
const POLICY = 'apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n  - name: deny-privileged\n    kind: denyPrivileged\n';
await admin.create('namespaces', undefined, { metadata: { name: NS } });
await admin.create('configmaps', NS, { metadata: { name: 'settings', namespace: NS }, data: { LOG: 'debug', 'policy.yaml': POLICY, unused: 'x' } });

type Json = Record<string, unknown>;
const getPod = (name: string): KubeObject | undefined => api.store.get('pods', NS, name);
const status = (name: string): Json => (getPod(name)?.status ?? {}) as Json;
const container = (name: string): Json => ((status(name).containerStatuses as Json[] | undefined) ?? [])[0] ?? {};
const ready = (name: string): boolean => ((status(name).conditions as Json[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const pidOf = (name: string): number => Number(String(container(name).containerID ?? '').replace('process://', ''));
const podDir = (pod: KubeObject): string => join(dir, 'pods', `${NS}_${pod.metadata?.name ?? ''}_${pod.metadata?.uid ?? ''}`);

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function serverPod(name: string, extra: { env?: Json[]; container?: Json; spec?: Json } = {}): KubeObject {
  return {
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      automountServiceAccountToken: false,
      // Long enough for a clean exit on a busy machine (the stubborn Pod below sets 3 s).
      terminationGracePeriodSeconds: GRACE_SECONDS,
      containers: [
        {
          name: 'server',
          image: 'registry.example.com/kube-admission-server:dev',
          args: ['--log-level=$(LEVEL)'],
          env: [
            { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'LOG' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MY_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            { name: 'CERT_DIR', value: '/tmp/certs' },
            { name: 'POLICY_FILE', value: '/etc/policy/policy.yaml' },
            ...(extra.env ?? []),
          ],
          ports: [{ name: 'https', containerPort: 8443 }, { name: 'health', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 1, failureThreshold: 1 },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, { name: 'policy', mountPath: '/etc/policy', readOnly: true }],
          ...(extra.container ?? {}),
        },
      ],
      volumes: [
        { name: 'tmp', emptyDir: {} },
        { name: 'policy', configMap: { name: 'settings', items: [{ key: 'policy.yaml', path: 'policy.yaml' }], defaultMode: 0o440 } },
      ],
      ...(extra.spec ?? {}),
    },
  };
}

/** NUL-separated KEY=value pairs, as the kernel keeps a process's environment. */
async function processEnv(pid: number): Promise<Record<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(raw.split('\0').filter((e) => e !== '').map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

let pod: KubeObject;
t.test('the container runs as the compiled server with its env, args and volumes', async (t) => {
  pod = await admin.create('pods', NS, serverPod('probe-me'));
  await until('probe-me ready', () => ready('probe-me'), STARTUP_MS);
  const ip = String(status('probe-me').podIP);
  t.ok(ip.startsWith(cluster.kubelet.network.prefix), `its own pod IP ${ip}`);
  t.equal((getPod('probe-me')?.spec as Json).nodeName, 'local-node', 'bound to the node');
  const pid = pidOf('probe-me');
  const env = await processEnv(pid);
  const volumes = join(podDir(pod), 'volumes');
  t.has(env, {
    POD_NAME: 'probe-me',
    APP: 'probe-me',
    MY_IP: ip,
    LEVEL: 'debug',
    HOSTNAME: 'probe-me',
    WEBHOOK_HOST: ip,
    CERT_DIR: join(volumes, 'tmp', 'certs'),
    POLICY_FILE: join(volumes, 'policy', 'policy.yaml'),
  });
  t.notOk('KUBECONFIG' in env, 'automountServiceAccountToken false: no credentials');
  t.notOk('NODE_OPTIONS' in env, "only the container's env: not the test runner's hooks (tap puts its loader into NODE_OPTIONS)");
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  t.equal(argv.at(-2), '--log-level=debug', '$(LEVEL) expanded in args');
  t.match(argv[1], /dist\/src\/main\.js$/, 'the image entrypoint: node dist/src/main.js');

  const policyDir = join(volumes, 'policy');
  t.ok((await lstat(join(policyDir, '..data'))).isSymbolicLink(), '..data is a symlink');
  t.match(await readlink(join(policyDir, '..data')), /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d{9}$/, 'to a timestamped directory');
  t.equal(await readlink(join(policyDir, 'policy.yaml')), join('..data', 'policy.yaml'), 'the key is a symlink through ..data');
  t.equal((await stat(join(policyDir, 'policy.yaml'))).mode & 0o777, 0o440, 'defaultMode');
  await t.rejects(lstat(join(policyDir, 'unused')), 'items: only the listed key');
  t.equal(await readFile(join(policyDir, 'policy.yaml'), 'utf8'), POLICY);

  const before = await readlink(join(policyDir, '..data'));
  const updated = `${POLICY}  - name: deny-host-namespaces\n    kind: denyHostNamespaces\n`;
  await admin.mergePatch({ resource: 'configmaps', namespace: NS, name: 'settings' }, { data: { 'policy.yaml': updated } });
  await until('the volume updated', async () => (await readFile(join(policyDir, 'policy.yaml'), 'utf8')) === updated, EVENT_MS);
  t.not(await readlink(join(policyDir, '..data')), before, 'by swapping ..data');

  // The server batches its log lines and flushes them at least once a second: the line may lag
  // the readiness it reports.
  const readLog = () => rawRequest(api, 'GET', `/api/v1/namespaces/${NS}/pods/probe-me/log`);
  await until('the ready line in the log', async () => /"msg":"ready"/.test((await readLog()).text), EVENT_MS).catch(() => undefined);
  const log = await readLog();
  t.equal(log.status, 200);
  t.match(log.text, /"msg":"ready"/, 'kubectl logs reads the container output');
});

t.test('deletion: SIGTERM, SIGKILL after terminationGracePeriodSeconds, then the Pod object goes', async (t) => {
  const uid = pod.metadata?.uid;
  const exitsBefore = cluster.kubelet.exits.length;
  await admin.delete({ resource: 'pods', namespace: NS, name: 'probe-me' });
  const deleting = getPod('probe-me');
  t.equal(deleting?.metadata?.deletionGracePeriodSeconds, GRACE_SECONDS, 'the grace period from the spec');
  await until('not ready', () => !ready('probe-me') || !getPod('probe-me'), EVENT_MS);
  await until('the Pod object removed', () => getPod('probe-me')?.metadata?.uid !== uid, GRACE_SECONDS * 1000 + EXIT_MS);
  const exit = cluster.kubelet.exits.slice(exitsBefore).find((e) => e.pod === 'probe-me');
  t.has(exit, { namespace: NS, pod: 'probe-me', code: 0, signal: null, terminating: true, graceSeconds: GRACE_SECONDS }, 'the server obeys SIGTERM: exit 0 within the grace period');
  t.ok(exit?.sigtermAt !== undefined && exit.exitedAt >= exit.sigtermAt && exit.sigtermAt >= exit.startedAt, 'the exit record has the SIGTERM and exit times, in order');

  // SHUTDOWN_DELAY (120 s) outlives the grace period (3 s): only SIGKILL ends this one.
  const stubborn = await admin.create('pods', NS, serverPod('stubborn', { env: [{ name: 'SHUTDOWN_DELAY', value: '120s' }], spec: { terminationGracePeriodSeconds: 3 } }));
  await until('stubborn ready', () => ready('stubborn'), STARTUP_MS);
  const started = performance.now();
  await admin.delete({ resource: 'pods', namespace: NS, name: 'stubborn' });
  await until('stubborn removed', () => getPod('stubborn')?.metadata?.uid !== stubborn.metadata?.uid, EXIT_MS);
  const killed = cluster.kubelet.exits.find((e) => e.pod === 'stubborn');
  t.has(killed, { namespace: NS, pod: 'stubborn', code: null, signal: 'SIGKILL', terminating: true, graceSeconds: 3 }, 'SIGKILL at the end of the grace period');
  t.ok(killed && killed.sigtermAt !== undefined && killed.exitedAt - killed.sigtermAt >= 3000, 'the exit came when the grace period ran out');
  t.ok(performance.now() - started < 120_000, 'before its own 120 s shutdown delay would have ended');
});

t.test('a readiness change made while the API is down reaches the Pod object once the API is back', async (t) => {
  // The readiness probe starts 4 s after the container: the change falls into the outage below.
  const probe = { httpGet: { path: '/readyz', port: 'health' }, initialDelaySeconds: 4, periodSeconds: 1, failureThreshold: 1 };
  const outage = await admin.create('pods', NS, serverPod('outage', { container: { readinessProbe: probe } }));
  await until('outage running, not ready yet', () => 'running' in ((container('outage').state ?? {}) as Json), STARTUP_MS);
  t.notOk(ready('outage'), 'not ready before its probe starts');
  const readyz = `http://${String(status('outage').podIP)}:8080/readyz`;
  await api.close();
  try {
    // The oracle is the container itself: its /readyz answers 200, so the kubelet's probe passed.
    await until('the container answers /readyz 200', async () => (await fetch(readyz).catch(() => undefined))?.status === 200, STARTUP_MS);
    await new Promise((resolve) => setTimeout(resolve, 5000)); // past the probe's initial delay and a period
    t.notOk(ready('outage'), 'the API is down: the Pod object cannot say Ready yet');
  } finally {
    await api.reopen();
  }
  // kubelet's status manager resyncs every 10 s; a status it could not write goes out again.
  await until('the Pod object says Ready after the outage', () => ready('outage'), 10_000 + EVENT_MS);
  t.ok(ready('outage'), 'Ready once the API answers again, without another probe transition');
  await admin.delete({ resource: 'pods', namespace: NS, name: 'outage' });
  await until('outage removed', () => getPod('outage')?.metadata?.uid !== outage.metadata?.uid, GRACE_SECONDS * 1000 + EXIT_MS);
});

t.test('a Pod whose container exits while the API is down is removed once the API is back; one created as it went down is bound', async (t) => {
  // A scale to zero at the start of an API outage (chaos seed 9191): SIGTERM before it, the exit
  // during it, so the kubelet's final delete meets a control plane that answers nothing.
  const going = await admin.create('pods', NS, serverPod('going', { env: [{ name: 'SHUTDOWN_DELAY', value: '3s' }] }));
  await until('going ready', () => ready('going'), STARTUP_MS);
  const exitsBefore = cluster.kubelet.exits.length;
  await admin.delete({ resource: 'pods', namespace: NS, name: 'going' });
  await api.close();
  try {
    await until('the container exited', () => cluster.kubelet.exits.slice(exitsBefore).some((e) => e.pod === 'going'), GRACE_SECONDS * 1000 + EXIT_MS);
    // Past the moment the final delete was tried: the API still answers nothing.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    t.equal(getPod('going')?.metadata?.uid, going.metadata?.uid, 'the API is down: the Pod object is still there');
  } finally {
    await api.reopen();
  }
  // kubelet's status manager deletes a terminated Pod at its next sync (every 10 s) until it lands.
  await until('the Pod object removed after the outage', () => getPod('going')?.metadata?.uid !== going.metadata?.uid, 10_000 + EVENT_MS);
  t.notOk(getPod('going'), 'removed once the API answers again');

  // A Pod the ReplicaSet controller created just as the API went down: the binding is retried.
  await api.close();
  let late: KubeObject;
  try {
    late = api.store.put('pods', serverPod('late'));
    await until('a binding refused during the outage', () => logged.some((line) => line.startsWith(`pod ${NS}/late: `) && line.includes('503')), EVENT_MS);
  } finally {
    await api.reopen();
  }
  await until('late bound and ready after the outage', () => ready('late'), 10_000 + STARTUP_MS);
  t.equal((getPod('late')?.spec as Json).nodeName, 'local-node', 'bound once the API answers again');
  await admin.delete({ resource: 'pods', namespace: NS, name: 'late' });
  await until('late removed', () => getPod('late')?.metadata?.uid !== late.metadata?.uid, GRACE_SECONDS * 1000 + EXIT_MS);
});

t.test('a failing liveness probe restarts the container; other images wait', async (t) => {
  await admin.create('pods', NS, serverPod('unhealthy', { container: { livenessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 2 } } }));
  await until('a restart', () => Number(container('unhealthy').restartCount ?? 0) >= 1, STARTUP_MS);
  const events = api.store.list('events', NS).filter((e) => (e.involvedObject as Json).name === 'unhealthy').map((e) => `${String(e.reason)}: ${String(e.message)}`);
  t.ok(events.some((e) => e.startsWith('Unhealthy: Liveness probe failed: dial tcp')), 'Unhealthy events');
  t.ok(events.includes('Killing: Container server failed liveness probe, will be restarted'), 'a Killing event');
  await admin.delete({ resource: 'pods', namespace: NS, name: 'unhealthy' }, { gracePeriodSeconds: 0 });

  await admin.create('pods', NS, { metadata: { name: 'nginx', namespace: NS }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } });
  await until('nginx waiting', () => (container('nginx').state as Json | undefined)?.waiting !== undefined);
  t.equal(((container('nginx').state as Json).waiting as Json).reason, 'NotRunLocally');
  await admin.delete({ resource: 'pods', namespace: NS, name: 'nginx' });
  await until('nginx removed', () => !getPod('nginx'), EVENT_MS);
});

t.test("another image runs from the local docker engine: its CMD's Node entry point in a copy of its WORKDIR, with its ENV", async (t) => {
  await requireEngine();
  await requireImage('node:26-slim', 'the base of the author\'s image');
  const context = await mkdtemp(join(tmpdir(), 'local-kubelet-image-'));
  const tag = `kas-kubelet-author-image:${process.pid}`;
  t.teardown(async () => {
    await docker(['image', 'rm', '-f', tag], 60_000, { allowFailure: true });
    await rm(context, { recursive: true, force: true });
  });
  // An author's image as `docker build` makes it: not this repository's, its own entry point.
  await writeFile(
    join(context, 'server.js'),
    `import { createServer } from 'node:http';
createServer((_req, res) => res.end(JSON.stringify({ argv: process.argv.slice(2), greeting: process.env.GREETING }))).listen(8080, process.env.WEBHOOK_HOST);
console.log('serving', process.argv.slice(2).join(' '));
`,
  );
  await writeFile(join(context, 'package.json'), '{ "type": "module" }\n');
  await writeFile(join(context, 'Dockerfile'), 'FROM node:26-slim\nWORKDIR /srv/author\nENV GREETING=from-the-image\nCOPY package.json server.js ./\nUSER node\nCMD ["node", "--enable-source-maps", "/srv/author/server.js", "--from-cmd"]\n');
  await docker(['build', '-q', '-t', tag, context], 300_000);

  await admin.create('pods', NS, {
    metadata: { name: 'authored', namespace: NS },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'webhooks', image: tag, ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 } }],
    },
  });
  await until('authored ready', () => ready('authored'), STARTUP_MS);
  const pid = pidOf('authored');
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((a) => a !== '');
  t.equal(argv.at(-3), '--enable-source-maps', 'node options of the image\'s CMD');
  t.equal(argv.at(-1), '--from-cmd', 'the script\'s args of the image\'s CMD');
  t.match(argv.at(-2), /\/images\/[0-9a-f]{16}\/server\.js$/, 'the script from the copy of the image\'s WORKDIR');
  t.equal(await readlink(`/proc/${pid}/cwd`), dirname(argv.at(-2)!), 'run in the copy of the WORKDIR');
  t.equal((await processEnv(pid))['GREETING'], 'from-the-image', 'with the image\'s ENV');
  const answer = await fetch(`http://${String(status('authored').podIP)}:8080/`).then((r) => r.json() as Promise<{ argv: string[]; greeting: string }>);
  t.same(answer, { argv: ['--from-cmd'], greeting: 'from-the-image' });
  await admin.delete({ resource: 'pods', namespace: NS, name: 'authored' }, { gracePeriodSeconds: 0 });
  await until('authored removed', () => !getPod('authored'), EVENT_MS);
});
