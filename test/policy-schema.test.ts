import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { ENTRY_FIELDS } from '../src/policy/policy-entry.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { policySchemaValidator, POLICY_SCHEMA_FILE } from '../src/policy/policy-schema.js';
import { BUILT_IN_RULES } from '../src/policy/rules/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUNDLED = ['policies/example.yaml', 'policies/cel.yaml', 'manifests/base/policy.yaml'];
const HEADER = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

t.test('every bundled policy names the published schema for editors, and validates against it', async (t) => {
  const validate = policySchemaValidator();
  for (const file of BUNDLED) {
    const text = await readFile(join(ROOT, file), 'utf8');
    const modeline = /^# yaml-language-server: \$schema=(\S+)$/.exec(text.split('\n')[0] ?? '');
    t.ok(modeline, `${file} starts with the yaml-language-server modeline`);
    t.equal(resolve(dirname(join(ROOT, file)), modeline?.[1] ?? ''), POLICY_SCHEMA_FILE, `${file} points at schema/policy.schema.json`);
    t.ok(validate(parse(text)), `${file}: ${JSON.stringify(validate.errors)}`);
  }
});

t.test('the schema knows exactly the loader’s rule kinds and entry fields', async (t) => {
  const schema = JSON.parse(await readFile(POLICY_SCHEMA_FILE, 'utf8')) as { definitions: { entry: { properties: Record<string, { enum?: string[] }> } } };
  const entry = schema.definitions.entry;
  t.same(new Set(entry.properties['kind']?.enum), new Set(BUILT_IN_RULES.keys()));
  t.same(new Set(Object.keys(entry.properties)), new Set(ENTRY_FIELDS));
});

t.test('what the loader refuses for its structure, the schema refuses too (editors show it as people type)', async (t) => {
  const validate = policySchemaValidator();
  const bad: [string, string][] = [
    ['unknown top-level field', `${HEADER}colour: blue\nwebhooks: []\n`],
    ['timeout out of range', `${HEADER}webhooks:\n  - { name: a, kind: denyPrivileged, timeoutSeconds: 45 }\n`],
    ['unknown kind', `${HEADER}webhooks:\n  - { name: a, kind: denyEverything }\n`],
    ['bad name', `${HEADER}webhooks:\n  - { name: Bad_Name, kind: denyPrivileged }\n`],
    ['unknown params field', `${HEADER}webhooks:\n  - { name: a, kind: denyPrivileged, params: { privileged: true } }\n`],
    ['params of the wrong shape', `${HEADER}webhooks:\n  - { name: a, kind: denyHostNamespaces, params: { hostNetwork: "yes" } }\n`],
    ['requireLabels without labels', `${HEADER}webhooks:\n  - { name: a, kind: requireLabels }\n`],
    ['cel without rules', `${HEADER}webhooks:\n  - { name: a, kind: cel, validations: [{ expression: "true" }] }\n`],
    ['validations on a built-in kind', `${HEADER}webhooks:\n  - { name: a, kind: denyPrivileged, validations: [{ expression: "true" }] }\n`],
    ['a bad reason', `${HEADER}webhooks:\n  - name: a\n    kind: cel\n    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]\n    validations: [{ expression: "true", reason: Teapot }]\n`],
    ['an empty rules list', `${HEADER}webhooks:\n  - { name: a, kind: denyPrivileged, rules: [] }\n`],
  ];
  for (const [what, text] of bad) {
    t.notOk(parsePolicy(text, 'p.yaml').ok, `${what}: the loader refuses it`);
    t.notOk(validate(parse(text)), `${what}: the schema refuses it`);
  }
});

t.test('the loader checks cel structure with the schema, keeping path and line', async (t) => {
  const result = parsePolicy(
    `${HEADER}webhooks:
  - name: a
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    variables:
      - { name: "9lives", expression: "1" }
    validations:
      - message: no expression
      - expression: "true"
        reason: Teapot
        colour: red
      - expression: "object.metadata.name == 1 +"
`,
    'p.yaml',
  );
  if (result.ok) throw new Error('expected problems');
  t.same(result.errors, [
    'p.yaml:8:17: webhooks[0].variables[0].name: "9lives" is not valid: it must match ^[A-Za-z_][A-Za-z0-9_]*$',
    'p.yaml:10:9: webhooks[0].validations[0]: missing required field "expression" (true when the request is allowed; sees object, oldObject, request, params, namespaceObject, variables)',
    'p.yaml:12:17: webhooks[0].validations[1].reason: must be one of Unauthorized, Forbidden, Invalid, RequestEntityTooLarge, got "Teapot"',
    'p.yaml:13:9: webhooks[0].validations[1]: unknown field "colour"; valid fields: expression, message, messageExpression, reason',
    'p.yaml:14:21: webhooks[0].validations[2].expression: CEL expression does not parse: Unexpected token: EOF (at column 28)',
  ]);
});
