import t from 'tap';
import type { KubeObject, MutationDecision } from '../src/admission/types.js';
import { admissionRequest, cronJob, deployment, pod, review, webhookFrom } from './support/policy/policy-fixtures.js';

function denial(decision: MutationDecision): string {
  if (decision.allowed) throw new Error(`expected a denial, got ${JSON.stringify(decision)}`);
  return decision.message;
}

const requireLabels = webhookFrom(`webhooks:
  - name: require-labels
    kind: requireLabels
    params:
      labels:
        - key: app
        - key: team
          pattern: "[a-z]+"
`);

t.test('requireLabels', async (t) => {
  const labelled = { app: 'web', team: 'payments' };
  t.same(await review(requireLabels, admissionRequest(pod({ containers: [] }, labelled))), { allowed: true });

  const missing = await review(requireLabels, admissionRequest(pod({ containers: [] }, { app: 'web' })));
  t.equal(denial(missing), 'Pod "web" is missing label "team"');
  t.match(missing, { code: 403 });

  const badValue = await review(requireLabels, admissionRequest(pod({ containers: [] }, { app: 'web', team: 'Payments-1' })));
  t.equal(denial(badValue), 'Pod "web" label "team" value "Payments-1" does not match the pattern [a-z]+');

  const deploymentLacking = deployment({ containers: [] }, { app: 'web' });
  deploymentLacking.metadata!.labels = labelled;
  t.equal(
    denial(await review(requireLabels, admissionRequest(deploymentLacking))),
    'pod template of Deployment "web" is missing label "team"',
    'a Deployment whose pods would be refused is refused itself',
  );
  const goodDeployment = deployment({ containers: [] }, labelled);
  goodDeployment.metadata!.labels = labelled;
  t.same(await review(requireLabels, admissionRequest(goodDeployment)), { allowed: true });

  const job = cronJob({ containers: [] }, {});
  job.metadata!.labels = labelled;
  t.equal(
    denial(await review(requireLabels, admissionRequest(job))),
    'pod template of CronJob "nightly" is missing label "app"; pod template of CronJob "nightly" is missing label "team"',
  );
});

const denyPrivileged = webhookFrom(`webhooks:
  - name: deny-privileged
    kind: denyPrivileged
    params:
      deniedCapabilities: [SYS_ADMIN, NET_ADMIN]
`);

t.test('denyPrivileged checks containers, init containers and ephemeral containers', async (t) => {
  const safe = { containers: [{ name: 'app', image: 'nginx', securityContext: { privileged: false, capabilities: { add: ['NET_BIND_SERVICE'] } } }] };
  t.same(await review(denyPrivileged, admissionRequest(pod(safe))), { allowed: true });

  const privileged = {
    initContainers: [{ name: 'setup', image: 'busybox', securityContext: { privileged: true } }],
    containers: [{ name: 'app', image: 'nginx', securityContext: { allowPrivilegeEscalation: true, capabilities: { add: ['cap_sys_admin', 'CHOWN'] } } }],
    ephemeralContainers: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }],
  };
  t.equal(
    denial(await review(denyPrivileged, admissionRequest(pod(privileged)))),
    [
      'init container "setup" sets securityContext.privileged: true; privileged containers are not allowed (remove it or set false)',
      'container "app" sets securityContext.allowPrivilegeEscalation: true; not allowed (remove it or set false)',
      'container "app" adds capabilities cap_sys_admin; not allowed (denied: SYS_ADMIN, NET_ADMIN)',
      'ephemeral container "debug" sets securityContext.privileged: true; privileged containers are not allowed (remove it or set false)',
    ].join('; '),
  );

  const inDeployment = denial(await review(denyPrivileged, admissionRequest(deployment({ containers: [{ name: 'app', securityContext: { privileged: true } }] }))));
  t.match(inDeployment, /^container "app" in pod template of Deployment "web" sets securityContext.privileged: true/);
  const inCronJob = denial(await review(denyPrivileged, admissionRequest(cronJob({ containers: [{ name: 'run', securityContext: { privileged: true } }] }))));
  t.match(inCronJob, /^container "run" in pod template of CronJob "nightly" sets securityContext.privileged: true/);
  t.same(await review(denyPrivileged, admissionRequest(cronJob(safe))), { allowed: true });
});

t.test('denyPrivileged can leave privilege escalation alone', async (t) => {
  const lenient = webhookFrom(`webhooks:
  - name: deny-privileged
    kind: denyPrivileged
    params: { allowPrivilegeEscalation: false }
`);
  const escalating = pod({ containers: [{ name: 'app', securityContext: { allowPrivilegeEscalation: true, capabilities: { add: ['SYS_ADMIN'] } } }] });
  t.same(await review(lenient, admissionRequest(escalating)), { allowed: true }, 'no capability is denied unless listed');
});

const denyHost = webhookFrom(`webhooks:
  - name: deny-host
    kind: denyHostNamespaces
    params: { hostPorts: true }
`);

t.test('denyHostNamespaces', async (t) => {
  const plain = { containers: [{ name: 'app', ports: [{ containerPort: 8080 }] }] };
  t.same(await review(denyHost, admissionRequest(pod(plain))), { allowed: true });
  t.same(await review(denyHost, admissionRequest(pod({ ...plain, hostNetwork: false }))), { allowed: true });

  const shared = { hostNetwork: true, hostPID: true, hostIPC: true, containers: [{ name: 'app', ports: [{ containerPort: 80, hostPort: 80 }] }] };
  t.equal(
    denial(await review(denyHost, admissionRequest(pod(shared)))),
    [
      "pod sets hostNetwork: true; sharing the host's namespaces is not allowed",
      "pod sets hostPID: true; sharing the host's namespaces is not allowed",
      "pod sets hostIPC: true; sharing the host's namespaces is not allowed",
      'container "app" uses hostPort 80; host ports are not allowed (use a Service)',
    ].join('; '),
  );
  t.equal(
    denial(await review(denyHost, admissionRequest(deployment({ hostPID: true, containers: [] })))),
    `pod template of Deployment "web" sets hostPID: true; sharing the host's namespaces is not allowed`,
  );
  t.equal(
    denial(await review(denyHost, admissionRequest(cronJob({ hostIPC: true, containers: [] })))),
    `pod template of CronJob "nightly" sets hostIPC: true; sharing the host's namespaces is not allowed`,
  );

  const portsAllowed = webhookFrom(`webhooks:
  - name: deny-host
    kind: denyHostNamespaces
`);
  t.same(await review(portsAllowed, admissionRequest(pod({ containers: [{ name: 'app', ports: [{ hostPort: 80 }] }] }))), { allowed: true }, 'hostPorts are allowed by default');
});

const registries = webhookFrom(`webhooks:
  - name: registries
    kind: allowedRegistries
    params:
      registries: [registry.example.com/, ghcr.io/acme, docker.io/library/]
`);

t.test('allowedRegistries', async (t) => {
  const allowedImages = ['nginx', 'nginx:1.27', 'library/redis@sha256:abc', 'docker.io/nginx', 'index.docker.io/library/busybox', 'ghcr.io/acme/app:1', 'registry.example.com/x/y:2'];
  for (const image of allowedImages) {
    t.same(await review(registries, admissionRequest(pod({ containers: [{ name: 'app', image }] }))), { allowed: true }, image);
  }
  const refused = ['quay.io/x/y:1', 'ghcr.io/acme-evil/app', 'someone/nginx', 'registry.example.com.evil.io/x', 'localhost:5000/app'];
  for (const image of refused) {
    t.equal(
      denial(await review(registries, admissionRequest(pod({ containers: [{ name: 'app', image }] })))),
      `container "app" image "${image}" is not from an allowed registry (allowed: registry.example.com/, ghcr.io/acme/, docker.io/library/)`,
    );
  }
  t.match(
    denial(await review(registries, admissionRequest(pod({ initContainers: [{ name: 'init' }], containers: [] })))),
    /^init container "init" has no image/,
  );
  t.match(
    denial(await review(registries, admissionRequest(deployment({ containers: [{ name: 'app', image: 'quay.io/x/y:1' }] })))),
    /^container "app" in pod template of Deployment "web" image "quay.io\/x\/y:1" is not from an allowed registry/,
  );
  t.match(
    denial(await review(registries, admissionRequest(cronJob({ containers: [{ name: 'run', image: 'quay.io/x/y:1' }] })))),
    /^container "run" in pod template of CronJob "nightly" image/,
  );
  t.same(await review(registries, admissionRequest(cronJob({ containers: [{ name: 'run', image: 'ghcr.io/acme/job' }] }))), { allowed: true });
});

t.test('validating rules allow DELETE, objects they do not understand, and pre-existing violations on UPDATE', async (t) => {
  const bad = pod({ containers: [{ name: 'app', securityContext: { privileged: true } }] });
  t.same(await review(denyPrivileged, admissionRequest(null, { operation: 'DELETE', oldObject: bad })), { allowed: true });

  const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { privileged: 'true' } };
  t.same(await review(denyPrivileged, admissionRequest(configMap)), { allowed: true });
  const malformed = pod({ containers: 'not-a-list', initContainers: [null, 7, { securityContext: 'x' }] });
  t.same(await review(denyPrivileged, admissionRequest(malformed)), { allowed: true }, 'malformed input is tolerated');

  const relabelled: KubeObject = structuredClone(bad);
  relabelled.metadata!.labels = { app: 'web', tier: 'front' };
  t.same(
    await review(denyPrivileged, admissionRequest(relabelled, { operation: 'UPDATE', oldObject: bad })),
    { allowed: true },
    'an object that already broke the rule may still be updated',
  );
  const worse: KubeObject = structuredClone(bad);
  (worse['spec'] as { containers: unknown[] }).containers.push({ name: 'second', securityContext: { privileged: true } });
  t.equal(
    denial(await review(denyPrivileged, admissionRequest(worse, { operation: 'UPDATE', oldObject: bad }))),
    'container "second" sets securityContext.privileged: true; privileged containers are not allowed (remove it or set false)',
    'a violation the update introduces is denied',
  );
  const good = pod({ containers: [{ name: 'app' }] });
  t.match(await review(denyPrivileged, admissionRequest(bad, { operation: 'UPDATE', oldObject: good })), { allowed: false });
});
