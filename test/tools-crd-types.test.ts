import t from 'tap';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './support/tools/run-command.js';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

const CRD = `apiVersion: v1
kind: ConfigMap
metadata: { name: not-a-crd }
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          description: A widget of the example team.
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: { type: integer, description: How big it is. }
                color: { type: string, enum: [red, blue] }
                port: { x-kubernetes-int-or-string: true }
                labels: { type: object, additionalProperties: { type: string } }
                parts:
                  type: array
                  items: { type: object, properties: { name: { type: string } } }
                extra: { type: object, x-kubernetes-preserve-unknown-fields: true }
                note: { type: string, nullable: true }
            status: { type: object, properties: { ready: { type: boolean } } }
    - name: v1alpha1
      served: true
      storage: false
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
    - name: v0
      served: false
      storage: false
`;

async function types(dir: string, args: string[]) {
  const node = unhookedNode([MAIN, 'types', ...args]);
  return runCommand(node.command, node.args, { cwd: dir, timeoutMs: 60_000, allowFailure: true });
}

t.test('types --crd writes types and kinds a strict project type-checks handlers against', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-crd-types-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'crd.yaml'), CRD);
  const written = await types(dir, ['--crd', 'crd.yaml', '--out', 'widget-types.ts']);
  t.equal(written.code, 0, written.stderr);
  t.match(written.stderr, /wrote widget-types\.ts: widgets\.example\.com/);
  const source = await readFile(join(dir, 'widget-types.ts'), 'utf8');
  t.match(source, /export const widgetV1 = defineKind<WidgetV1>\(\{ kind: "Widget", group: "example\.com", version: "v1", plural: "widgets", namespaced: true, subresources: \['status'\] \}\);/);
  t.match(source, /export const widgetV1alpha1 = defineKind<WidgetV1alpha1>/);
  t.notMatch(source, /WidgetV0/, 'a version that is not served gets no type');
  t.match(source, /export type Widget = WidgetV1;/, 'the storage version under the kind\'s name');

  await writeFile(
    join(dir, 'handlers.ts'),
    [
      "import { defineValidatingWebhook } from 'kube-admission-server';",
      "import { widgetV1, type Widget } from './widget-types.js';",
      "export const ok = defineValidatingWebhook({ name: 'ok', kind: widgetV1, handler: (request) => {",
      '  const size: number | undefined = request.object?.spec?.size;',
      "  const color: 'red' | 'blue' | undefined = request.object?.spec?.color;",
      '  const port: number | string | undefined = request.object?.spec?.port;',
      '  const label: string | undefined = request.object?.spec?.labels?.["team"];',
      '  const part: string | undefined = request.object?.spec?.parts?.[0]?.name;',
      '  const extra: unknown = request.object?.spec?.extra?.["anything"];',
      '  const note: string | null | undefined = request.object?.spec?.note;',
      '  const name: string | undefined = request.object?.metadata?.name;',
      "  return size === undefined || size > 3 || color === 'red' || port || label || part || extra || note || name ? { allowed: true } : { allowed: false, message: 'x' };",
      '} });',
      "export const widget: Widget = { spec: { size: 1 } };",
      "export const wrongField = defineValidatingWebhook({ name: 'wrong', kind: widgetV1, handler: (request) => ({ allowed: request.object?.spec?.sise === 1, message: 'x' }) });",
      "export const wrongEnum: Widget = { spec: { size: 1, color: 'green' } };",
      "export const missingRequired: Widget = { spec: {} };",
      '',
    ].join('\n'),
  );
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const compilerOptions = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true, types: ['node'], skipLibCheck: true, paths: { 'kube-admission-server': [join(ROOT, 'dist', 'src', 'index.d.ts')] } };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['handlers.ts'] }));
  const tsc = await runCommand(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, timeoutMs: 3 * 60_000, allowFailure: true });
  const errors = tsc.stdout.split('\n').filter((line) => / error TS\d+:/.test(line));
  t.same(
    errors.map((line) => /^handlers\.ts\((\d+),\d+\): error (TS\d+)/.exec(line)?.slice(1).join(' ')),
    ['15 TS2339', '16 TS2322', '17 TS2741'],
    `only the three wrong lines fail: a misspelt field, a value outside the enum, a missing required field:\n${tsc.stdout}`,
  );
  t.match(tsc.stdout, /Property 'sise' does not exist on type '\{ size: number; color\?: "red" \| "blue"/);
});

t.test('types refuses what is no v1 CRD, naming the file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-crd-types-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'none.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n');
  await writeFile(join(dir, 'beta.yaml'), CRD.replace('apiextensions.k8s.io/v1\nkind: CustomResourceDefinition', 'apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition'));
  const none = await types(dir, ['--crd', 'none.yaml']);
  t.equal(none.code, 2);
  t.match(none.stderr, /no CustomResourceDefinition in none\.yaml/);
  const beta = await types(dir, ['--crd', 'beta.yaml']);
  t.equal(beta.code, 2);
  t.match(beta.stderr, /beta\.yaml.*apiVersion must be apiextensions\.k8s\.io\/v1/);
  const missing = await types(dir, []);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--crd FILE/);
});
