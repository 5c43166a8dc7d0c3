import { AUTHORIZER_ANSWER_FLAG, AUTHORIZER_ANSWERS_FLAG, DEFAULT_NAMESPACE_FLAG, HANDLERS_FLAG, OUTPUT_FLAG, toolDefaults, VERBOSE_FLAG, type ToolOptions } from '../config/tool-args.js';
import { defineCommand } from './command.js';

/** The policy's declarative tests: each case's expected decision against what the policy says. */
export const test = defineCommand<ToolOptions>({
  name: 'test',
  summary: 'run the declarative policy tests in a folder; exit 1 when one fails',
  usage: ['kube-admission-server test DIR [--handlers MODULE] [--junit FILE] [-o text|json] [-v] [flags]'],
  description: [
    'Runs the PolicyTest files in DIR: each case\'s object through the policy and the custom webhooks',
    'of --handlers as evaluate would, its decision, message, warnings and patch held against what',
    'the case expects. Prints a pass/fail table. Exit codes: 0 every test passed, 1 a test failed,',
    '2 bad input (the message names the file and document).',
  ].join('\n'),
  flags: [
    { names: ['--junit'], value: 'FILE', description: 'also write a JUnit XML report (for CI)', apply: (o, v) => void (o.junitFile = v) },
    HANDLERS_FLAG,
    DEFAULT_NAMESPACE_FLAG,
    AUTHORIZER_ANSWER_FLAG,
    AUTHORIZER_ANSWERS_FLAG,
    OUTPUT_FLAG,
    VERBOSE_FLAG,
  ],
  serverFlags: ['policy-file', 'namespace', 'kubernetes-version'],
  answersForInstall: true,
  examples: [
    { command: 'kube-admission-server test policies/tests --junit report.xml', comment: 'the bundled policies\' own tests, with a JUnit report' },
    { command: 'kube-admission-server test tests/ --handlers dist/src/webhooks.js', comment: 'declarative tests of your compiled TypeScript handlers too' },
  ],
  defaults: () => toolDefaults('test'),
  positionals: (options, args) => {
    if (args.length !== 1) return ['test: give exactly one folder of test files: kube-admission-server test DIR'];
    options.testDir = args[0];
    return [];
  },
  run: async ({ config, options, io }) => (await import('../tools/test-command.js')).runTests(config, options, io),
});
