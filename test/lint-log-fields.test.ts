// A log call in src/ whose own field takes the name of a key every line carries (level, time,
// msg, the base `name`, a child's `component`) is a lint error (eslint.config.js): the line would
// repeat the key. Judged by linting probe sources with the repository's own configuration.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const cwd = fileURLToPath(new URL('../', import.meta.url));
const eslint = new ESLint({ cwd });

async function fieldErrors(source: string, filePath = 'src/kube/probe.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(`declare const logger: any, name: string, level: string;\n${source}\nexport {};\n`, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

const refused = [
  "logger.info({ kind: 'validating', name }, 'restored');",
  "logger.warn({ name: 'web', uid: 'u' }, 'admission review');",
  "logger.debug({ 'msg': 'x' }, 'm');",
  "logger.error({ level: 'high' }, 'm');",
  "logger[level]({ time: 1 }, 'm');",
  "this.options.logger[level ? 'info' : 'error']({ component: 'tls' }, 'm');",
  "logger.child({ name: 'reconciler' });",
];
const allowed = [
  "logger.info({ kind: 'validating', object: name }, 'restored');",
  "logger.info({ withheld: [{ name }] }, 'nested objects are objects of their own');",
  "logger.child({ component: 'tls' });",
  "logger.info('a message alone');",
  "register({ name, level });",
];

t.test('a log field named like a key every line carries is refused, naming the fix', async (t) => {
  for (const source of refused) {
    const errors = await fieldErrors(source);
    t.equal(errors.length, 1, `refused: ${source}`);
    t.match(errors[0], /name the (field|binding) for what it is/);
  }
});

t.test('fields named for what they are pass', async (t) => {
  for (const source of allowed) t.same(await fieldErrors(source), [], `allowed: ${source}`);
});

t.test('the rule holds in src/ only: tests and the local cluster log what they like', async (t) => {
  t.same(await fieldErrors("logger.info({ name: 'web' }, 'm');", 'test/probe.test.ts'), []);
});
