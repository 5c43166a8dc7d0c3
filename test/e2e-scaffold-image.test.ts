import t from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { docker, imageConfig, requireEngine } from './support/image/docker.js';
import { dockerRunArgs } from './support/image/pod-run-args.js';
import { waitUntilReady } from './support/image/ready-container.js';
import { findObject, type KubeObject } from '../local-cluster/util/kube-object.js';
import { asDeployment } from './support/manifests/workload.js';
import { stageWorkingTree } from './support/tools/npm-package.js';
import { cleanEnvironment, runCommand } from './support/tools/run-command.js';
import { requireTool } from './support/tools/tools.js';
import { startScenarioCluster } from './support/cluster/local-cluster-scenario.js';
import { describeResult } from './support/tools/kubectl.js';
import { request, type ReviewResponse } from './support/server/server-harness.js';

// The project `npm run init` writes from a clone (depending on the clone's packed tarball), built
// into an image FROM this checkout's server image with the project's own Dockerfile as written, run the way its kustomize overlay runs it (read-only, uid 1000, no
// capabilities) under docker and asked to judge a Pod; then the same image installed with the
// project's overlay on the local cluster (whose kubelet runs the image's Node entry point from
// its WORKDIR copied out of docker) and a Pod with a latest tag refused through kubectl.
t.setTimeout(30 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const SUFFIX = `scaffold-e2e-${process.pid}`;
const BASE = `kube-admission-server:${version}-${SUFFIX}`;
const IMAGE = `my-webhooks-${SUFFIX}:1.0.0`;

let scratch = '';
t.before(async () => {
  await requireEngine();
  scratch = await mkdtemp(join(tmpdir(), 'kas-scaffold-image-'));
});
t.teardown(async () => {
  await docker(['rmi', '-f', IMAGE, BASE], 120_000, { allowFailure: true });
  await rm(scratch, { recursive: true, force: true });
});

t.test('npm run init in a clone -> npm install, npm test -> image FROM the server image -> a Pod with a latest tag denied over TLS', async (t) => {
  await runCommand('bash', [join(ROOT, 'scripts', 'build-image.sh')], { cwd: ROOT, env: { ...process.env, IMAGE: BASE }, timeoutMs: 25 * 60_000 });
  // Before a release: in a clone, one command packs it and writes a project depending on the tarball.
  const clone = await stageWorkingTree(ROOT, scratch);
  const env = cleanEnvironment();
  await runCommand('npm', ['run', 'init', '--', join(scratch, 'my-webhooks')], { cwd: clone, env, timeoutMs: 4 * 60_000 });
  const project = join(scratch, 'my-webhooks');
  await runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env, timeoutMs: 4 * 60_000 });
  const tested = await runCommand('npm', ['test'], { cwd: project, env, timeoutMs: 3 * 60_000, allowFailure: true });
  t.equal(tested.code, 0, `npm test is green:\n${tested.stdout}${tested.stderr}`);
  t.match(await readFile(join(project, 'Dockerfile'), 'utf8'), `ARG BASE_IMAGE=kube-admission-server:${version}\n`);
  // The project's Dockerfile as init wrote it: its build stage finds the tarball in the context.
  await runCommand('docker', ['build', '--network', 'host', '--build-arg', `BASE_IMAGE=${BASE}`, '--tag', IMAGE, '.'], {
    cwd: project,
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
    timeoutMs: 15 * 60_000,
  });

  const { config } = await imageConfig(IMAGE);
  t.equal(config.User, '1000:1000', 'the base image’s user carries over');
  t.same(config.Entrypoint, ['node', 'handlers/dist/src/main.js']);
  const npm = await docker(['run', '--rm', '--entrypoint', 'node', IMAGE, '-e', "const fs = require('node:fs'); console.log(fs.existsSync('/usr/local/bin/npm'), fs.existsSync('/app/handlers/node_modules'), fs.realpathSync('/app/node_modules/kube-admission-server'))"]);
  t.equal(npm.stdout.trim(), 'false false /app', 'no npm, no second copy of the server: the package name resolves to the image’s /app');

  // Run as the project's kustomize overlay says (its Deployment, with the project's image).
  const kustomized = await runCommand(requireTool('kubectl'), ['kustomize', join(project, 'deploy', 'kustomize')], { cwd: project, env, timeoutMs: 60_000 });
  const objects = parseAllDocuments(kustomized.stdout).map((d) => d.toJS() as KubeObject);
  const deployment = asDeployment(findObject(objects, 'Deployment', 'kube-admission-server'));
  const container = `kas-scaffold-${process.pid}-${Date.now()}`;
  const runArgs = await dockerRunArgs(deployment, {
    containerName: 'server',
    namespace: 'kube-admission-server',
    podName: container,
    objects,
    scratchDir: scratch,
    envOverrides: { WEBHOOK_PORT: '0', HEALTH_PORT: '0', SHUTDOWN_DELAY: '0s' },
  });
  t.equal(runArgs.at(-1), 'my-webhooks:1.0.0', 'the overlay names the project’s image');
  runArgs[runArgs.length - 1] = IMAGE;
  t.teardown(() => docker(['rm', '-f', container], 60_000, { allowFailure: true }));
  await docker(['run', '--detach', '--name', container, '--network', 'host', ...runArgs]);
  const { port } = await waitUntilReady(container, 120_000);
  const ca = (await docker(['exec', container, 'cat', '/tmp/certs/ca.crt'])).stdout;
  const servername = 'kube-admission-server.kube-admission-server.svc';

  const review = (image: string) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${image}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web',
      namespace: 'shop',
      operation: 'CREATE',
      userInfo: { username: 'dev' },
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'web', image }] } },
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
  const denied = (await request(port, '/validate/pinned-images?timeout=5s', review('nginx:latest'), { ca, servername })).json as ReviewResponse;
  t.equal(denied.response.allowed, false, 'the project’s validating handler denies');
  t.match(denied.response.status?.message, /pin the image of web/);
  const allowed = (await request(port, '/validate/pinned-images?timeout=5s', review('nginx:1.27.3'), { ca, servername })).json as ReviewResponse;
  t.equal(allowed.response.allowed, true, 'and admits a pinned image');

  await docker(['stop', '--time', '5', container], 60_000);
  t.equal((await docker(['inspect', '--format', '{{ .State.ExitCode }}', container])).stdout.trim(), '0', 'SIGTERM: node as PID 1, a clean exit');

  await t.test('the image on the local cluster: the project\'s overlay installed, a Pod with a latest tag refused by kubectl', async (t) => {
    const cluster = await startScenarioCluster(t);
    if (!cluster) return;
    const { sh } = cluster;
    t.teardown(async () => {
      if (t.passing()) return;
      t.comment(`diagnostics:\n${describeResult(await sh('kubectl -n kube-admission-server get deployments,pods,endpoints -o wide; kubectl -n kube-admission-server get events', 30_000))}`);
      t.comment(`local cluster output (last 6000 characters):\n${cluster.cluster.output.slice(-6000)}`);
    });
    const succeeded = (result: Awaited<ReturnType<typeof sh>>): boolean => t.equal(result.code, 0, `${result.command}\n${result.code === 0 ? '' : describeResult(result)}`);
    // The overlay as written, its image swapped for this run's tag (the only change a user's CI makes with `kustomize edit set image`).
    const overlay = join(scratch, 'overlay.yaml');
    await writeFile(overlay, kustomized.stdout.replaceAll('image: my-webhooks:1.0.0', `image: ${IMAGE}`));
    succeeded(await sh(`kubectl apply -f ${overlay}`));
    succeeded(await sh('kubectl -n kube-admission-server rollout status deployment/kube-admission-server --timeout=240s', 260_000));
    // The leader registers once its own self-check and a ready endpoint allow it.
    const registered = await sh('for i in $(seq 1 120); do kubectl get validatingwebhookconfiguration kube-admission-server -o jsonpath=\'{.webhooks[*].clientConfig.service.path}\' 2>/dev/null | grep -q pinned-images && exit 0; sleep 1; done; exit 1', 140_000);
    succeeded(registered);
    succeeded(await sh('kubectl create namespace shop'));
    const pod = (name: string, image: string): string => `kubectl -n shop run ${name} --image=${image} --restart=Never`;
    const denied = await sh(pod('web', 'nginx:latest'));
    t.equal(denied.code, 1, 'kubectl fails');
    // A handler's denial without a code: kube-apiserver raises it to 400 with no reason, which kubectl prints without one.
    t.match(denied.stderr, /^Error from server: admission webhook "[a-z0-9.-]+" denied the request: pinned-images: pin the image of web to a version tag or a digest$/m, 'the project\'s handler refused it, by kube-apiserver\'s words');
    t.equal((await sh('kubectl -n shop get pod web')).code, 1, 'nothing stored');
    succeeded(await sh(pod('pinned', 'nginx:1.27.3')));
  });
});
