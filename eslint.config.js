import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'exit', message: 'Only src/main.ts exits the process.' }],
    },
  },
  { files: ['src/main.ts', 'test/**', 'bench/**', 'local-cluster/cli/**'], rules: { 'no-restricted-properties': 'off' } },
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
