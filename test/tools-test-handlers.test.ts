import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';
import { runCommand } from './support/tools/run-command.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

// A compiled handler module, as `tsc` leaves it: it imports the package (here its compiled entry).
const HANDLERS = `import { defineMutatingWebhook, defineValidatingWebhook, setLabel } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'index.js')).href)};
export const webhooks = [
  defineValidatingWebhook({ name: 'team-label', kind: 'Deployment', handler: (request) =>
    request.object?.metadata?.labels?.team ? { allowed: true } : { allowed: false, message: 'deployments need a "team" label' } }),
  defineMutatingWebhook({ name: 'stamp', kind: 'Deployment', handler: (request) =>
    request.object ? { allowed: true, object: setLabel(request.object, 'example.com/stamped', 'yes') } : { allowed: true } }),
];
`;

const RESOURCES = `apiVersion: apps/v1
kind: Deployment
metadata: { name: labelled, namespace: shop, labels: { team: a } }
spec: { selector: { matchLabels: { app: x } }, template: { metadata: { labels: { app: x } }, spec: { containers: [{ name: x, image: x:1 }] } } }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: unlabelled, namespace: shop }
spec: { selector: { matchLabels: { app: y } }, template: { metadata: { labels: { app: y } }, spec: { containers: [{ name: y, image: y:1 }] } } }
`;

function testFile(expectUnlabelled: 'denied' | 'allowed'): string {
  return `apiVersion: kube-admission-server/v1
kind: PolicyTest
name: custom handlers
policy: policy.yaml
resources: [resources.yaml]
results:
  - { resource: Deployment/shop/labelled, webhook: team-label, decision: allowed }
  - { resource: Deployment/shop/unlabelled, webhook: team-label, decision: ${expectUnlabelled}, message: need a "team" label }
  - resource: Deployment/shop/labelled
    webhook: stamp
    decision: allowed
    patched: { metadata: { labels: { team: a, example.com/stamped: "yes" } } }
`;
}

async function runTest(dir: string, args: string[]) {
  const node = unhookedNode([MAIN, 'test', ...args]);
  return runCommand(node.command, node.args, { cwd: dir, timeoutMs: 60_000, allowFailure: true });
}

t.test('test --handlers runs the declarative tests against compiled custom handlers', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-test-handlers-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'webhooks.js'), HANDLERS);
  await writeFile(join(dir, 'policy.yaml'), 'apiVersion: kube-admission-server/v1\nkind: Policy\nwebhooks: []\n');
  await writeFile(join(dir, 'resources.yaml'), RESOURCES);
  await writeFile(join(dir, 'handlers-test.yaml'), testFile('denied'));

  const passing = await runTest(dir, ['.', '--handlers', 'webhooks.js']);
  t.equal(passing.code, 0, `${passing.stdout}${passing.stderr}`);
  t.match(passing.stdout, /\n3 passed, 0 failed\n/);

  await writeFile(join(dir, 'handlers-test.yaml'), testFile('allowed'));
  const failing = await runTest(dir, ['.', '--handlers', 'webhooks.js']);
  t.equal(failing.code, 1, 'a wrong expectation about a custom handler fails the run');
  t.match(failing.stdout, /FAIL\s+custom handlers\s+Deployment\/shop\/unlabelled\s+team-label\s+allowed\s+denied/);

  const without = await runTest(dir, ['.']);
  t.equal(without.code, 1, 'without --handlers the webhooks are missing');
  t.match(without.stdout, /the policy has no webhook "team-label"/);

  const broken = await runTest(dir, ['.', '--handlers', 'missing.js']);
  t.equal(broken.code, 2);
  t.match(broken.stderr, /missing\.js: cannot load the handler module/);
});
