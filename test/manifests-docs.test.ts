import t from 'tap';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderInstalls } from './support/manifests/installs.js';
import { findObject } from '../local-cluster/util/kube-object.js';
import { asDeployment, podSpecOf } from './support/manifests/workload.js';

// The operator guide is only useful while it describes what the manifests actually do.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const guide = await readFile(join(ROOT, 'docs', 'operations.md'), 'utf8');

/** The section of the guide under a "## " or "### " heading, up to the next heading of any level. */
function section(heading: string): string {
  const start = guide.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`docs/operations.md has no heading ${JSON.stringify(heading)}`);
  const next = guide.slice(start + heading.length + 1).search(/^#{2,3} /m);
  return next < 0 ? guide.slice(start) : guide.slice(start, start + heading.length + 1 + next);
}

t.test('install and uninstall commands name kustomizations that exist', async (t) => {
  const paths = [...guide.matchAll(/kubectl (?:apply|delete) -k (\S+)/g)].map((m) => m[1]!);
  t.ok(paths.includes('manifests/base') && paths.includes('manifests/overlays/cert-manager'), 'plain and cert-manager installs are given');
  for (const path of new Set(paths)) await t.resolves(access(join(ROOT, path, 'kustomization.yaml')), `${path} is a kustomization`);
});

t.test('the emergency escape is given as one line', async (t) => {
  t.match(section('## Uninstall and the emergency escape'), /\nkubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration kube-admission-server\n/);
});

t.test('the configuration table lists exactly the variables the Deployments set', async (t) => {
  const documented = new Set([...section('## Configuration').matchAll(/^\| `([A-Z_]+)`(?:, `([A-Z_]+)`)? \|/gm)].flatMap((m) => [m[1]!, m[2]].filter((v): v is string => v !== undefined)));
  for (const { name, objects } of await renderInstalls(ROOT)) {
    const deployment = asDeployment(findObject(objects, 'Deployment', 'kube-admission-server'));
    const set = new Set(podSpecOf(deployment).containers.flatMap((c) => (c.env ?? []).map((e) => e.name)));
    // The custom-handlers install adds a variable of the handlers' own, documented in writing-webhooks.md.
    if (name.endsWith('custom-handlers')) t.ok(set.delete('ALLOWED_REGISTRIES'), `${name}: the handlers' own variable beside the server's`);
    t.same([...set].sort(), [...documented].sort(), `${name}: documented variables = set variables`);
  }
});

t.test('every metric is documented', async (t) => {
  const metrics = section('## Metrics');
  for (const name of [
    'kube_admission_requests_total',
    'kube_admission_request_duration_seconds',
    'kube_admission_requests_in_flight',
    'kube_admission_certificate_not_after_seconds',
    'kube_admission_certificate_reloads_total',
    'kube_admission_certificate_reload_errors_total',
  ]) {
    t.match(metrics, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} has a row`);
  }
});

t.test('the troubleshooting table covers kube-apiserver’s error texts', async (t) => {
  const table = section('### Errors from kube-apiserver');
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  for (const text of [
    'context deadline exceeded',
    'x509: certificate signed by unknown authority',
    'no endpoints available for service',
    'service "kube-admission-server" not found',
    'connection refused',
    'expected response.uid',
    'webhook response was absent',
    'does not support dry run',
    'denied the request',
  ]) {
    const row = rows.find((r) => r.split(' | ')[0]!.includes(text));
    t.ok(row, `a row for ${JSON.stringify(text)}`);
    t.equal(row?.split(' | ').length, 3, `${JSON.stringify(text)}: error, cause and fix columns`);
  }
});
