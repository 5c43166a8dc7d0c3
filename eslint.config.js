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
  // The floors of src/ (CONTRIBUTING.md): main -> commands -> (lifecycle, tools) -> (server, tls,
  // kube) -> policy, and config/ and util/ under everything. A floor never imports one above it
  // or a sibling it must not know.
  ...floor('src/config', ['policy', 'server', 'tls', 'kube', 'lifecycle', 'tools', 'commands']),
  ...floor('src/util', ['policy', 'server', 'tls', 'kube', 'lifecycle', 'tools', 'commands']),
  ...floor('src/policy', ['server', 'tls', 'kube', 'lifecycle', 'tools', 'commands']),
  ...floor('src/server', ['tls', 'kube', 'lifecycle', 'tools', 'commands']),
  ...floor('src/tls', ['policy', 'server', 'kube', 'lifecycle', 'tools', 'commands']),
  ...floor('src/kube', ['server', 'tls', 'lifecycle', 'tools', 'commands']),
  ...floor('src/lifecycle', ['tools', 'commands']),
  ...floor('src/tools', ['lifecycle', 'commands']),
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
