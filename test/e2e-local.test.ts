import t, { type Test } from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ANY_PORTS, ChildServer, startLocalServer } from './support/server/child-server.js';
import { EVENT_MS, EXIT_MARGIN_MS } from './support/deadline.js';
import { podReview, request } from './support/server/server-harness.js';


async function scratchDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-e2e-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('local mode: generates its CA, serves verified TLS, mutates a Pod, exits 0 on SIGTERM', async (t) => {
  const certDir = await scratchDir(t);
  const { child, port, healthPort } = await startLocalServer(t, certDir);
  const skipped = child.logs.find((l) => l.msg === 'registration skipped');
  t.match(skipped, { reason: 'no cluster configured' }, 'says why registration is skipped');
  t.match(String(skipped?.['try']), /curl --cacert .* --resolve kube-admission-server\.default\.svc:\d+:127\.0\.0\.1/);

  const caPem = await readFile(join(certDir, 'ca.crt'), 'utf8');
  const reply = await request(port, '/mutate/default-labels?timeout=5s', podReview({ uid: 'e2e-1' }), { ca: caPem });
  t.equal(reply.status, 200);
  const response = (reply.json as { response: { uid: string; allowed: boolean; patch?: string; patchType?: string } }).response;
  t.equal(response.uid, 'e2e-1');
  t.equal(response.allowed, true);
  t.equal(response.patchType, 'JSONPatch');
  const patch = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8')) as { path: string }[];
  t.ok(patch.some((op) => op.path === '/metadata/labels/kube-admission-server~1defaulted'), 'the default label is added');

  const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) });
  t.equal(ready.status, 200);
  const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  t.match(metrics, /kube_admission_requests_total\{[^}]*webhook="default-labels"/);
  t.match(metrics, /kube_admission_certificate_not_after_seconds\{certificate="serving"\}/);
  t.notMatch(child.stdout, /BEGIN (RSA )?PRIVATE KEY/, 'no key material in the logs');

  const exit = await child.stop('SIGTERM');
  t.equal(exit.code, 0, 'clean exit');
  t.ok(exit.ms < 5000 + EXIT_MARGIN_MS, `exited ${Math.round(exit.ms)} ms after SIGTERM (default deadline 5 s)`);
  t.match(child.logs.find((l) => l.msg === 'shutdown complete'), { steps: { 'server-close': /^ok/ } });
  // Node's and the libraries' own warnings (deprecations, experimental features) bypass the JSON
  // log and reach a pod's log as bare text; a start and a stop write none.
  t.equal(child.stderr, '', 'nothing on stderr from start to exit');
});

t.test('local mode reuses its persisted CA on the next start', async (t) => {
  const certDir = await scratchDir(t);
  const first = await startLocalServer(t, certDir);
  const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');
  t.equal((await first.child.stop()).code, 0);
  const second = await startLocalServer(t, certDir);
  t.equal(await readFile(join(certDir, 'ca.crt'), 'utf8'), ca, 'same CA');
  t.equal((await second.child.stop('SIGINT')).code, 0, 'SIGINT is graceful too');
});

t.test('invalid flags: every problem on its own line, exit 2, nothing started', async (t) => {
  const child = new ChildServer(['--port', 'http', '--teardown', 'maybe']);
  const { code } = await child.exit();
  t.equal(code, 2);
  t.match(child.stderr, /--port: "http" is not a port/);
  t.match(child.stderr, /--teardown: "maybe" is not supported; use one of: auto, always, never/);
  t.equal(child.logs.length, 0, 'no server log: nothing started');
});

t.test('an invalid policy file is refused at start with its path and line, exit 2', async (t) => {
  const dir = await scratchDir(t);
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, 'apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks:\n  - name: Bad_Name\n    kind: requireLabels\n');
  const child = new ChildServer(['--policy-file', policy, '--cert-dir', dir, ...ANY_PORTS]);
  t.teardown(() => child.stop('SIGKILL'));
  const { code } = await child.exit();
  t.equal(code, 2);
  const failure = child.logs.find((l) => l.msg === 'startup failed; shutting down');
  t.match(JSON.stringify(failure?.['problems']), new RegExp(`${policy.replace(/[.]/g, '\\.')}:4:`), 'names the file and line');
});

t.test('--help lists the flags; render prints both configurations with the caBundle', async (t) => {
  const help = new ChildServer(['--help']);
  t.equal((await help.exit()).code, 0);
  t.match(help.stdout, /--shutdown-timeout\s+deadline for teardown/);

  const certDir = await scratchDir(t);
  const render = new ChildServer(['render', '--cert-dir', certDir]);
  t.equal((await render.exit()).code, 0, render.stderr);
  const docs = parseAllDocuments(render.stdout).map((d) => d.toJS() as { kind: string; webhooks: { clientConfig: { caBundle: string; service: { path: string } } }[] });
  t.same(docs.map((d) => d.kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
  const ca = await readFile(join(certDir, 'ca-bundle.crt'), 'utf8');
  t.equal(Buffer.from(docs[0]!.webhooks[0]!.clientConfig.caBundle, 'base64').toString('utf8'), ca);
  t.ok(docs[1]!.webhooks.some((w) => w.clientConfig.service.path === '/validate/validating-fail-t5/deny-privileged.deny-host-namespaces'), 'grouped, the path naming the members');
});

t.test('a second signal exits at once, even during the shutdown delay', async (t) => {
  const certDir = await scratchDir(t);
  const { child } = await startLocalServer(t, certDir, ['--shutdown-delay', '20s']);
  child.process.kill('SIGTERM');
  await child.waitForMessage('shutdown requested');
  const exit = await child.stop('SIGTERM');
  t.equal(exit.code, 1, 'exit 1: the graceful shutdown did not finish');
  t.ok(exit.ms < EXIT_MARGIN_MS, `exited ${Math.round(exit.ms)} ms after the second signal, not after the 20 s delay`);
  t.match(child.stderr, /second SIGTERM: exiting at once/);
  t.notOk(child.logs.some((l) => l.msg === 'shutdown complete' || l.msg === 'shutdown finished with problems'), 'cut short: no shutdown summary');
});
