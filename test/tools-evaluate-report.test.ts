import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { KubeObject } from '../src/admission/types.js';
import { evaluateObjects } from '../src/tools/evaluation.js';
import { EvaluateReport, jsonReport, textReport } from '../src/tools/evaluate-report.js';

const EXAMPLE = fileURLToPath(new URL('../policies/example.yaml', import.meta.url));

const pod = (name: string, privileged: boolean): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', labels: { app: name } },
  spec: { containers: [{ name: 'c', image: 'registry.k8s.io/busybox', securityContext: { privileged } }] },
});

async function results() {
  const parsed = parsePolicy(await readFile(EXAMPLE, 'utf8'), EXAMPLE);
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const manifests = [pod('fine', false), pod('root-shell', true)].map((object, i) => ({ object, source: `doc ${i + 1}` }));
  return await evaluateObjects(parsed.webhooks, manifests, { excludedNamespaces: ['kube-system'], defaultNamespace: 'default' });
}

t.test('the JSON report, written an object at a time, is JSON.stringify(report, null, 2) of the whole', async (t) => {
  const evaluated = await results();
  const written = jsonReport(evaluated);
  const parsed = JSON.parse(written) as { allowed: boolean; objects: { name: string; allowed: boolean }[] };
  t.equal(written, `${JSON.stringify(parsed, null, 2)}\n`, 'byte for byte as one stringify of the whole would write it');
  t.same(parsed.objects.map((o) => [o.name, o.allowed]), [['fine', true], ['root-shell', false]]);
  t.equal(parsed.allowed, false);
});

t.test('an empty JSON report is still that', async (t) => {
  const written = new EvaluateReport('json').toString();
  t.equal(written, `${JSON.stringify({ allowed: true, objects: [] }, null, 2)}\n`);
});

t.test('the text report counts what it was given', async (t) => {
  const evaluated = await results();
  const report = new EvaluateReport('text');
  for (const result of evaluated) report.add(result);
  t.equal(report.toString(), textReport(evaluated, false));
  t.equal(report.objects, 2);
  t.equal(report.allowed, false);
  t.match(report.toString(), /\n2 object\(s\): 1 allowed, 1 denied\n$/);
});
