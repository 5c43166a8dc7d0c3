// Sub-command help: `help` lists the commands, `<command> --help` shows that
// command's usage, its own flags, the server flags it reads and an example, and an unknown
// command or flag is refused with the nearest known one. Judged on the list of commands itself
// (every entry, so a new one is covered) and on the compiled binary as a child process.
import t from 'tap';
import { COMMANDS } from '../src/commands/index.js';
import { defineCommand } from '../src/commands/command.js';
import { FLAGS } from '../src/config/flags.js';
import { loadConfig, type EnvironmentProbe } from '../src/config/load-config.js';
import { runToolBinary } from './support/tools/tool-runner.js';

const probe: EnvironmentProbe = { env: {}, readFile: () => undefined, exists: () => false, hostname: () => 'test' };
const helpOf = (argv: string[], commands = COMMANDS): string => {
  const result = loadConfig(argv, probe, commands);
  if (result.kind !== 'help') throw new Error(`no help for ${argv.join(' ')}: ${JSON.stringify(result)}`);
  return result.text;
};
const problemsOf = (argv: string[]): string[] => {
  const result = loadConfig(argv, probe, COMMANDS);
  return result.kind === 'invalid' ? result.problems : [];
};

t.test('help lists every command with its summary', async (t) => {
  const text = helpOf(['help']);
  t.match(text, /^Usage: kube-admission-server \[command\] \[flags\]/);
  for (const command of COMMANDS) t.match(text, new RegExp(`\\n  ${command.name} +${command.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`), command.name);
  t.match(text, /help \[command\]/);
});

t.test('<command> --help: usage, own flags, the server flags it reads and no others, an example', async (t) => {
  for (const command of COMMANDS) {
    const text = helpOf([command.name, '--help']);
    t.match(text, new RegExp(`^Usage: kube-admission-server (\\[${command.name}\\]|${command.name})( |$)`), `${command.name}: usage first`);
    t.ok(text.includes(command.description), `${command.name}: what it does`);
    for (const flag of command.flags) for (const name of flag.names) t.ok(text.includes(name), `${command.name}: its flag ${name}`);
    for (const flag of FLAGS) {
      const reads = command.serverFlags === 'all' || command.serverFlags.includes(flag.name);
      t.equal(text.includes(`env ${flag.env};`), reads, `${command.name}: --${flag.name} ${reads ? 'listed' : 'not listed'}`);
    }
    t.ok(command.examples.length > 0, `${command.name}: has an example`);
    for (const example of command.examples) t.ok(text.includes(example.command) && example.command.includes('kube-admission-server'), `${command.name}: example shown`);
    t.equal(helpOf(['help', command.name]), text, `help ${command.name} is the same text`);
    t.equal(helpOf([command.name, '-h']), text, `${command.name} -h is the same text`);
  }
  t.equal(helpOf(['--help']), helpOf(['serve', '--help']), 'a bare --help is the server\'s');
});

t.test('an unknown command or flag is refused with the nearest known one', async (t) => {
  t.match(problemsOf(['evalute', '-f', 'x.yaml']), [/^"evalute": unknown command; did you mean "evaluate"\? \(kube-admission-server help lists the commands\)$/]);
  t.match(problemsOf(['rendr']), [/did you mean "render"/]);
  t.match(problemsOf(['frobnicate']), [/^"frobnicate": unknown command \(kube-admission-server help/], 'nothing near: no guess');
  t.match(problemsOf(['--polcy-file', 'p.yaml']), [/^--polcy-file: unknown flag; did you mean --policy-file\? \(kube-admission-server --help lists the flags\)$/]);
  t.match(problemsOf(['evaluate', '-f', 'x.yaml', '--fillename', 'y.yaml']), [/^--fillename: unknown flag; did you mean --filename\? \(kube-admission-server evaluate --help/]);
  t.match(problemsOf(['evaluate', '-f', 'x.yaml', '--port', '8443']), [/^--port: not a flag of evaluate/], 'a server flag a tool does not read');
  t.match(problemsOf(['test', 'dir', '--junit']), [/^--junit: needs a value \(FILE\)$/]);
  t.same(problemsOf(['--shutdown', '5s']), ['--shutdown: unknown flag; did you mean --shutdown-timeout or --shutdown-delay? (kube-admission-server --help lists the flags)'], 'a prefix of two flags names both; its value is not taken for a command');
  t.same(problemsOf(['--polcy-file', 'p.yaml']).length, 1, 'the value of a misspelt flag is not taken for a command');
  const unknownTopic = loadConfig(['help', 'evaluat'], probe, COMMANDS);
  t.match(unknownTopic, { kind: 'invalid', problems: [/did you mean "evaluate"/] });
});

t.test('a new command is one entry in the list: parsed, listed and helped like the others', async (t) => {
  const hello = defineCommand<{ greeting: string; name?: string }>({
    name: 'hello',
    summary: 'say hello',
    usage: ['kube-admission-server hello [--greeting WORD] NAME'],
    description: 'Says hello.',
    flags: [{ names: ['--greeting'], value: 'WORD', description: 'the greeting', apply: (o, v) => void (o.greeting = v) }],
    serverFlags: ['log-level'],
    examples: [{ command: 'kube-admission-server hello --greeting hi world', comment: 'hi, world' }],
    defaults: () => ({ greeting: 'hello' }),
    positionals: (o, args) => {
      if (args.length !== 1) return ['hello: give one NAME'];
      o.name = args[0];
      return [];
    },
    run: async ({ options, io }) => (io.stdout(`${options.greeting}, ${options.name}\n`), 0),
  });
  const commands = [...COMMANDS, hello];
  t.match(helpOf(['help'], commands), /\n {2}hello +say hello\n/);
  t.match(helpOf(['hello', '--help'], commands), /--greeting WORD +the greeting[\s\S]*--log-level/);
  const loaded = loadConfig(['hello', '--greeting', 'hi', 'world', '--log-level', 'warn'], probe, commands);
  if (loaded.kind !== 'run') return t.fail(JSON.stringify(loaded));
  t.equal(loaded.command, 'hello');
  t.same(loaded.options, { greeting: 'hi', name: 'world' });
  t.equal(loaded.config.logLevel, 'warn');
  let out = '';
  const code = await loaded.spec.run({ config: loaded.config, options: loaded.options, io: { stdout: (s) => void (out += s), stderr: () => undefined, stdin: process.stdin }, startProcess: () => Promise.reject(new Error('not here')) });
  t.same([code, out], [0, 'hi, world\n']);
});

t.test('the binary: help on stdout with exit 0, a typo on stderr with exit 2', async (t) => {
  const help = await runToolBinary(['evaluate', '--help']);
  t.equal(help.code, 0, help.stderr);
  t.match(help.stdout, /^Usage: kube-admission-server evaluate -f FILE\|DIR\|-/);
  t.match(help.stdout, /Example/);
  const list = await runToolBinary(['help']);
  t.equal(list.code, 0);
  for (const command of COMMANDS) t.match(list.stdout, `\n  ${command.name} `);
  const typo = await runToolBinary(['evalute', '-f', 'x.yaml']);
  t.equal(typo.code, 2);
  t.match(typo.stderr, /"evalute": unknown command; did you mean "evaluate"\?/);
  t.equal(typo.stdout, '');
});
