import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Files under `folder` may not import the sibling folders of src/ named in `forbidden`. */
function floor(folder, forbidden) {
  const below = folder.replace(/^src\//, '');
  return [{
    files: [`${folder}/**`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
          message: `src/${below} may not import ${forbidden.map((f) => `src/${f}`).join(', ')}: imports point down the floors (CONTRIBUTING.md).`,
        }],
      }],
    },
  }];
}

/**
 * Keys every log line carries already (pino's level, time and msg, the logger's base `name`, a
 * child's `component`): a log call's own field with one of these names repeats a key in the line,
 * and log pipelines keep only one of the two (src/lifecycle/logger.ts).
 */
const LINE_KEYS = '/^(level|time|msg|name|pid|hostname|component)$/';
const LOG_CALL = ':matches(CallExpression[callee.property.name=/^(trace|debug|info|warn|error|fatal)$/], CallExpression[callee.computed=true][callee.object.name=/^log(ger)?$/], CallExpression[callee.computed=true][callee.object.property.name=/^log(ger)?$/])';
const logFields = (call, keys) => `${call} > ObjectExpression.arguments:first-child > Property:matches([key.name=${keys}], [key.value=${keys}])`;

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', 'docs/api/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'exit', message: 'Only src/main.ts exits the process.' }],
    },
  },
  { files: ['src/main.ts', 'test/**', 'bench/**', 'local-cluster/cli/**'], rules: { 'no-restricted-properties': 'off' } },
  // The floors of src/ (CONTRIBUTING.md): main -> commands -> (lifecycle, tools) -> reports ->
  // registration -> (server, tls, kube) -> (policy, webhooks) -> (cel, admission), and config/ and
  // util/ under everything. A floor never imports one above it or a sibling it must not know.
  ...floor('src/config', ['admission', 'cel', 'webhooks', 'policy', 'server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/util', ['admission', 'cel', 'webhooks', 'policy', 'server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/admission', ['cel', 'webhooks', 'policy', 'server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/cel', ['webhooks', 'policy', 'server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/webhooks', ['policy', 'server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/policy', ['server', 'registration', 'tls', 'kube', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/server', ['policy', 'tls', 'kube', 'registration', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/tls', ['admission', 'cel', 'webhooks', 'policy', 'server', 'kube', 'registration', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/kube', ['server', 'tls', 'registration', 'reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/registration', ['reports', 'lifecycle', 'tools', 'commands']),
  ...floor('src/reports', ['server', 'tls', 'lifecycle', 'tools', 'commands']),
  ...floor('src/lifecycle', ['tools', 'commands']),
  ...floor('src/tools', ['lifecycle', 'commands']),
  {
    files: ['src/**'],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: logFields(LOG_CALL, LINE_KEYS), message: 'Every log line carries this key already (src/lifecycle/logger.ts): name the field for what it is (object, entry, configuration).' },
        { selector: logFields("CallExpression[callee.property.name='child']", '/^(level|time|msg|name|pid|hostname)$/'), message: 'Every log line carries this key already (src/lifecycle/logger.ts): name the binding for what it is.' },
      ],
    },
  },
  {
    // The local cluster is the product's oracle: it judges src/, so it must not share code with it.
    files: ['local-cluster/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'kube-admission-server', message: 'The local cluster never imports the product (it is its oracle).' }],
        patterns: [{ regex: '^(\\.\\./)+(src|test|bench|examples)/', message: 'The local cluster never imports src/ (it is the product\'s oracle) nor the tests.' }],
      }],
    },
  },
);
