import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docker, imageConfig, imageFiles, requireEngine, requireImage } from './support/image/docker.js';
import { dockerRunArgs } from './support/image/pod-run-args.js';
import { waitUntilReady } from './support/image/ready-container.js';
import { parseDockerfile } from './support/manifests/dockerfile.js';
import { findObject } from '../local-cluster/util/kube-object.js';
import { renderKustomization } from './support/manifests/kustomize.js';
import { asDeployment } from './support/manifests/workload.js';
import { runCommand } from './support/tools/run-command.js';
import { podReview, request, type ReviewResponse } from './support/server/server-harness.js';

// The image built from the Dockerfile and run the way the manifests run it. The first build on a
// machine takes minutes (npm ci in the build stage); later ones reuse docker's build cache.
t.setTimeout(30 * 60_000);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NAME = 'kube-admission-server';
const NAMESPACE = 'kube-admission-server';
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const IMAGE = `${NAME}:${version}`;
const BASE_IMAGE = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8')).globalArgs['NODE_IMAGE']!;

t.before(async () => {
  const engine = await requireEngine();
  await requireImage(BASE_IMAGE, 'the Dockerfile’s NODE_IMAGE');
  const built = await runCommand('bash', [join(ROOT, 'scripts', 'build-image.sh')], { cwd: ROOT, timeoutMs: 25 * 60_000 });
  const { sizeBytes } = await imageConfig(IMAGE);
  t.comment(`docker ${engine}: built ${IMAGE} in ${(built.ms / 1000).toFixed(1)} s, ${(sizeBytes / 1e6).toFixed(0)} MB`);
});

t.test('the image: uid 1000, node as PID 1, OCI labels, no build-time configuration', async (t) => {
  const { config } = await imageConfig(IMAGE);
  t.equal(config.User, '1000:1000');
  t.same(config.Entrypoint, ['node', 'dist/src/main.js']);
  t.same(config.Cmd ?? [], [], 'no CMD to append arguments by accident');
  t.equal(config.WorkingDir, '/app');
  t.same(Object.keys(config.ExposedPorts ?? {}).sort(), ['8080/tcp', '8443/tcp']);
  const labels = config.Labels ?? {};
  t.equal(labels['org.opencontainers.image.title'], NAME);
  t.equal(labels['org.opencontainers.image.version'], version, 'the version of package.json');
  t.match(labels['org.opencontainers.image.revision'], /^[0-9a-f]{40}(-dirty)?$/, 'the git commit it was built from');
  t.equal(labels['org.opencontainers.image.licenses'], 'Apache-2.0');
  t.equal(labels['org.opencontainers.image.base.name'], BASE_IMAGE);
  t.same(
    config.Env.map((e) => e.split('=')[0]).sort(),
    ['NODE_COMPILE_CACHE', 'NODE_ENV', 'NODE_OPTIONS', 'PATH'],
    'no variable of the base (NODE_EXTRA_CA_CERTS of a locally made one, npm or yarn versions) carries over',
  );
  t.ok(config.Env.includes('NODE_OPTIONS=--max-semi-space-size=4'), 'the young generation the benchmarks measure with');
});

t.test('its file system: node, the compiled server, production dependencies; no package manager, sources or keys', async (t) => {
  const files = await imageFiles(IMAGE);
  for (const path of ['usr/local/bin/node', 'app/package.json', 'app/dist/src/main.js', 'app/dist/src/index.js', 'app/.node-compile-cache', 'app/policies/example.yaml', 'app/schema/policy.schema.json', 'app/node_modules/fastify/package.json']) {
    t.ok(files.has(path), `has /${path}`);
  }
  for (const path of [
    'usr/local/bin/npm',
    'usr/local/bin/npx',
    'usr/local/bin/corepack',
    'usr/local/bin/yarn',
    'usr/local/lib/node_modules/npm/package.json',
    'usr/local/lib/node_modules/corepack/package.json',
    'usr/local/etc/npmrc',
    'app/src',
    'app/test',
    'app/bench',
    'app/node_modules/typescript',
    'app/node_modules/tap',
    'app/node_modules/eslint',
  ]) {
    t.notOk(files.has(path), `no /${path}`);
  }
  const own = [...files].filter((f) => f.startsWith('app/') && !f.startsWith('app/node_modules/'));
  t.same(own.filter((f) => /\.(ts|key|pem|crt|map)$/.test(f) && !f.endsWith('.d.ts')), [], 'no TypeScript sources, source maps or key material of its own');
});

t.test('its Node is 26 LTS, the line the image is built for', async (t) => {
  const { stdout } = await docker(['run', '--rm', '--network', 'none', '--entrypoint', 'node', IMAGE, '--version']);
  t.match(stdout.trim(), /^v26\.\d+\.\d+$/, `node --version in the image: ${stdout.trim()}`);
});

t.test('its entry is the bundle, compiled from the baked-in compile cache as the user the image runs as', async (t) => {
  // Node logs its compile cache's decisions with NODE_DEBUG_NATIVE=COMPILE_CACHE.
  const run = await docker(['run', '--rm', '--network', 'none', '--read-only', '--user', '1000:1000', '--env', 'NODE_DEBUG_NATIVE=COMPILE_CACHE', IMAGE, '--help']);
  t.match(run.stdout, /^Usage: kube-admission-server/);
  t.match(run.stderr, /V8 code cache for ESM file:\/\/\/app\/dist\/src\/main\.js was accepted/, 'the cache made at build time is used');
  t.notMatch(run.stderr, /Cannot create cache directory|rejected/, 'nothing rejected');
  const main = await docker(['run', '--rm', '--network', 'none', '--entrypoint', 'node', IMAGE, '-e', "process.stdout.write(require('node:fs').readFileSync('/app/dist/src/main.js', 'utf8').slice(0, 4000))"]);
  t.notMatch(main.stdout, /from\s*["'](?!node:)[^"']+["']/, 'main.js imports no package: everything it needs is inside');
});

t.test('run like the manifests run it: serves a review over TLS in local mode, stops on SIGTERM with exit 0 within 5 s', async (t) => {
  const objects = await renderKustomization(join(ROOT, 'manifests', 'base'));
  const deployment = asDeployment(findObject(objects, 'Deployment', NAME));
  const scratch = await mkdtemp(join(tmpdir(), 'kas-image-'));
  t.teardown(() => rm(scratch, { recursive: true, force: true }));
  const container = `kas-e2e-${process.pid}-${Date.now()}`;
  const runArgs = await dockerRunArgs(deployment, {
    containerName: 'server',
    namespace: NAMESPACE,
    podName: container,
    objects,
    scratchDir: scratch,
    // The engine runs without a bridge, so the container shares the host network: port 0 instead
    // of 8443/8080, the kernel picks free ones and the server logs them (no window in which a
    // parallel test could take a port chosen for it). No endpoints to drain, no shutdown delay.
    envOverrides: { WEBHOOK_PORT: '0', HEALTH_PORT: '0', SHUTDOWN_DELAY: '0s' },
  });
  t.equal(runArgs.at(-1), IMAGE, 'the manifests name the image this version builds');
  for (const flag of ['--read-only', '--user 1000:1000', '--cap-drop ALL', '--security-opt no-new-privileges']) t.ok(runArgs.join(' ').includes(flag), `runs with ${flag}`);
  t.ok(runArgs.some((a) => a.startsWith('/tmp:')), 'with /tmp as the writable emptyDir');

  t.teardown(() => docker(['rm', '-f', container], 60_000, { allowFailure: true }));
  await docker(['run', '--detach', '--name', container, '--network', 'host', ...runArgs]);
  const { port } = await waitUntilReady(container, 120_000);

  // What the kernel says about PID 1, rather than what the flags asked for.
  const status = (await docker(['exec', container, 'cat', '/proc/1/status'])).stdout;
  t.match(status, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m, 'uid 1000');
  t.match(status, /^Gid:\s+1000\s+1000\s+1000\s+1000$/m, 'gid 1000');
  t.match(status, /^CapEff:\s+0+$/m, 'no effective capability');
  t.match(status, /^CapBnd:\s+0+$/m, 'none to regain');
  t.match(status, /^NoNewPrivs:\s+1$/m, 'no-new-privileges');
  t.equal((await docker(['exec', container, 'cat', '/proc/1/cmdline'])).stdout.split('\0').filter(Boolean).join(' '), 'node dist/src/main.js', 'node is PID 1');
  const write = await docker(['exec', container, 'touch', '/app/x'], 60_000, { allowFailure: true });
  t.match(write.stderr, /Read-only file system/, 'the root file system is read-only');

  // Local generate mode writes its CA and key to CERT_DIR, on the emptyDir the manifests mount at /tmp.
  const certDir = (await docker(['exec', container, 'printenv', 'CERT_DIR'])).stdout.trim();
  t.equal(certDir, '/tmp/certs');
  t.equal((await docker(['exec', container, 'stat', '-c', '%a %u', `${certDir}/tls.key`])).stdout.trim(), '600 1000', 'the key is 0600, owned by the server');
  const ca = (await docker(['exec', container, 'cat', `${certDir}/ca.crt`])).stdout;

  const servername = `${NAME}.${NAMESPACE}.svc`;
  const privileged = podReview();
  ((privileged['request'] as { object: { spec: { containers: Array<Record<string, unknown>> } } }).object.spec.containers[0]!)['securityContext'] = { privileged: true };
  const denied = await request(port, '/validate/deny-privileged?timeout=5s', privileged, { ca, servername });
  t.equal(denied.status, 200, 'TLS verified against the generated CA under the Service name');
  const reply = (denied.json as ReviewResponse).response;
  t.equal(reply.uid, (privileged['request'] as { uid: string }).uid);
  t.equal(reply.allowed, true, 'the shipped policy (manifests/base/policy.yaml) only warns: it refuses nothing of what a cluster already runs');
  t.match(reply.warnings, [/^deny-privileged: .*privileged/], 'the warning names the rule and the finding');
  const allowed = (await request(port, '/validate/deny-privileged?timeout=5s', podReview(), { ca, servername })).json as ReviewResponse;
  t.equal(allowed.response.allowed, true, 'and admits an ordinary one');
  t.notOk(allowed.response.warnings, 'without a warning');

  const started = performance.now();
  await docker(['stop', '--time', '5', container], 60_000);
  const stopMs = performance.now() - started;
  const state = (await docker(['inspect', '--format', '{{ .State.ExitCode }} {{ .State.OOMKilled }}', container])).stdout.trim();
  t.equal(state, '0 false', 'exit code 0: SIGTERM handled by node as PID 1 and done before docker’s SIGKILL at 5 s');
  const logs = await docker(['logs', container]);
  t.match(logs.stdout, /"msg":"shutdown complete"/, 'the shutdown summary was logged');
  t.comment(`docker stop took ${(stopMs / 1000).toFixed(2)} s`);
});
