// The floors of src/ and the local cluster's independence are lint rules (eslint.config.js):
// an import that points up a floor, or from the local cluster into src/, is an error. Judged by
// linting probe sources at the paths they would have, with the repository's own configuration.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const cwd = fileURLToPath(new URL('../', import.meta.url));
const eslint = new ESLint({ cwd });

async function importErrors(filePath: string, from: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${from}';\nexport const y = x;\n`, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const refused: [string, string][] = [
  ['src/server/probe.ts', '../lifecycle/run-server.js'],
  ['src/server/probe.ts', '../kube/client.js'],
  ['src/policy/probe.ts', '../server/index.js'],
  ['src/cel/probe.ts', '../kube/client.js'],
  ['src/cel/library/probe.ts', '../../webhooks/registry.js'],
  ['src/admission/probe.ts', '../cel/compile.js'],
  ['src/admission/probe.ts', '../webhooks/registry.js'],
  ['src/webhooks/probe.ts', '../policy/policy-file.js'],
  ['src/server/probe.ts', '../policy/policy-file.js'],
  ['src/tls/probe.ts', '../kube/client.js'],
  ['src/kube/probe.ts', '../tls/index.js'],
  ['src/kube/probe.ts', '../lifecycle/run-server.js'],
  ['src/kube/probe.ts', '../registration/register.js'],
  ['src/server/probe.ts', '../registration/registration.js'],
  ['src/registration/probe.ts', '../lifecycle/run-server.js'],
  ['src/lifecycle/probe.ts', '../commands/index.js'],
  ['src/tools/probe.ts', '../lifecycle/run-server.js'],
  ['src/config/probe.ts', '../policy/policy-file.js'],
  ['src/reports/probe.ts', '../server/run-as-called.js'],
  ['src/registration/probe.ts', '../reports/probe.js'],
  ['src/reports/probe.ts', '../tls/index.js'],
  ['src/reports/probe.ts', '../lifecycle/run-server.js'],
  ['src/reports/probe.ts', '../tools/audit-command.js'],
  ['src/kube/probe.ts', '../reports/probe.js'],
  ['src/server/probe.ts', '../reports/probe.js'],
  ['src/policy/probe.ts', '../reports/probe.js'],
  ['src/util/probe.ts', '../server/index.js'],
  ['local-cluster/cluster/probe.ts', '../../src/policy/policy-file.js'],
  ['local-cluster/probe.ts', '../test/support/deadline.js'],
];
const allowed: [string, string][] = [
  ['src/lifecycle/probe.ts', '../server/index.js'],
  ['src/lifecycle/probe.ts', '../kube/client.js'],
  ['src/lifecycle/probe.ts', '../registration/registration.js'],
  ['src/registration/probe.ts', '../kube/client.js'],
  ['src/reports/probe.ts', '../registration/owner.js'],
  ['src/registration/probe.ts', '../server/review/review.js'],
  ['src/tools/probe.ts', '../server/index.js'],
  ['src/server/probe.ts', '../webhooks/registry.js'],
  ['src/server/probe.ts', '../admission/types.js'],
  ['src/policy/probe.ts', '../webhooks/registry.js'],
  ['src/webhooks/probe.ts', '../cel/compile.js'],
  ['src/server/probe.ts', '../config/types.js'],
  ['src/policy/probe.ts', '../util/abort.js'],
  ['src/cel/library/probe.ts', '../../admission/types.js'],
  ['src/commands/probe.ts', '../lifecycle/run-server.js'],
  ['src/reports/probe.ts', '../kube/client.js'],
  ['src/reports/probe.ts', '../policy/policy.js'],
  ['src/reports/probe.ts', '../webhooks/registry.js'],
  ['src/reports/probe.ts', '../util/abort.js'],
  ['src/lifecycle/probe.ts', '../reports/probe.js'],
  ['src/tools/probe.ts', '../reports/probe.js'],
  ['src/probe.ts', './commands/index.js'],
];

t.test('imports that point up a floor are refused, naming the rule', async (t) => {
  for (const [file, from] of refused) {
    const errors = await importErrors(file, from);
    t.equal(errors.length, 1, `${file} importing ${from}: refused`);
  }
});

t.test('imports down the floors pass', async (t) => {
  for (const [file, from] of allowed) t.same(await importErrors(file, from), [], `${file} importing ${from}: allowed`);
});
