import t from 'tap';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copySources, execFormArgs, parseDockerfile, type Instruction, type Stage } from './support/manifests/dockerfile.js';
import { isIgnored, parseDockerignore } from './support/manifests/dockerignore.js';

// The recipe, checked without an engine; test/e2e-image.test.ts builds and runs the image itself.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dockerfile = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
const ignoreRules = parseDockerignore(await readFile(join(ROOT, '.dockerignore'), 'utf8'));
const packageJson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };

const runtime = dockerfile.stages.at(-1)!;
const build = dockerfile.stages[0]!;
const node = dockerfile.stages[1]!;
const all = (stage: Stage, keyword: string): Instruction[] => stage.instructions.filter((i) => i.keyword === keyword);
const last = (stage: Stage, keyword: string): Instruction | undefined => all(stage, keyword).at(-1);

t.test('build on Node 26 slim, ship production dependencies on the same Node less its package managers', async (t) => {
  t.same(dockerfile.stages.map((s) => [s.name, s.image]), [
    ['build', 'node:26-slim'],
    ['node', 'node:26-slim'],
    ['runtime', 'scratch'],
  ]);
  t.equal(dockerfile.globalArgs['NODE_IMAGE'], 'node:26-slim', 'Node 26 LTS, slim; the base image scripts/base-image.sh makes where no registry is reachable');
  const buildRuns = all(build, 'RUN').map((i) => i.args).join(' && ');
  t.match(buildRuns, /npm ci\b/, 'a locked install');
  t.match(buildRuns, /npm run build:package\b/, 'compiles the library as the npm package does');
  t.match(buildRuns, /npm run build:package.*npm run build:bundle && cp dist\/bundle\/main\.js dist\/src\/main\.js/, 'the entry becomes the one-file bundle');
  t.match(buildRuns, /npm run build:package.*npm prune --omit=dev/, 'then drops the dev dependencies');
  t.match(buildRuns, /NODE_COMPILE_CACHE=\/app\/\.node-compile-cache node dist\/src\/main\.js/, 'fills the compile cache with the image’s Node');
  const buildUsers = all(build, 'USER').map((i) => i.args);
  t.same(buildUsers, ['1000:1000', 'root'], 'as the runtime’s uid (Node keys the cache folder by uid), then back to root');

  const removed = all(node, 'RUN').map((i) => i.args).join(' ');
  for (const path of ['/usr/local/lib/node_modules', '/usr/local/bin/npm', '/usr/local/bin/npx', '/usr/local/bin/corepack', '/usr/local/bin/yarn', '/usr/local/etc/npmrc']) {
    t.ok(removed.split(/\s+/).includes(path), `the node stage removes ${path}`);
  }
  const [first] = runtime.instructions;
  t.same(first && { keyword: first.keyword, ...copySources(first) }, { keyword: 'COPY', from: 'node', sources: ['/'], destination: '/' }, 'the runtime starts from the cleaned file system, so nothing removed lingers in a lower layer');
  t.same(all(runtime, 'RUN'), [], 'the runtime stage installs nothing');
  const fromBuild = all(runtime, 'COPY').map(copySources).filter((c) => c.from === build.name);
  t.ok(fromBuild.some((c) => c.sources.includes('/app/node_modules')), 'runtime node_modules come from the pruned build');
  t.ok(fromBuild.some((c) => c.sources.some((s) => s.startsWith('/app/dist'))), 'and the compiled code');
  t.ok(fromBuild.some((c) => c.sources.includes('/app/.node-compile-cache')), 'and its compile cache');
  t.match(all(runtime, 'ENV').map((i) => i.args).join(' '), /NODE_COMPILE_CACHE=\/app\/\.node-compile-cache/, 'which Node is told to use');
});

t.test('OCI labels: title, version of package.json, revision, licence, base', async (t) => {
  const labels = all(runtime, 'LABEL').map((i) => i.args).join(' ');
  for (const key of ['title', 'description', 'version', 'revision', 'licenses', 'base.name']) t.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${key.replace('.', '\\.')}=`), key);
  const version = all(runtime, 'ARG').find((a) => a.args.startsWith('VERSION='));
  t.equal(version?.args, `VERSION=${packageJson.version}`, 'the default version is package.json’s (scripts/build-image.sh passes it too)');
});

t.test('runs as a numeric non-root user with node as PID 1', async (t) => {
  const user = last(runtime, 'USER')?.args ?? '';
  const [uid, gid] = user.split(':');
  t.match(uid, /^\d+$/, 'numeric, so the kubelet can verify runAsNonRoot');
  t.ok(Number(uid) > 0 && (gid === undefined || Number(gid) > 0), `non-root: ${user}`);
  const entrypoint = last(runtime, 'ENTRYPOINT');
  t.ok(entrypoint, 'an ENTRYPOINT');
  const args = entrypoint ? execFormArgs(entrypoint) : undefined;
  t.same(args, ['node', 'dist/src/main.js'], 'exec form: SIGTERM goes to node itself, no shell in between');
  t.same(args, packageJson.scripts['start']?.split(' '), 'the same command as npm start');
  t.same(all(runtime, 'CMD'), [], 'no CMD that could replace the arguments by accident');
  t.same(all(runtime, 'EXPOSE').flatMap((i) => i.args.split(/\s+/)).sort(), ['8080', '8443']);
});

t.test('no certificates, keys or secrets are baked in', async (t) => {
  for (const stage of dockerfile.stages) {
    for (const copy of [...all(stage, 'COPY'), ...all(stage, 'ADD')]) {
      t.notOk(copySources(copy).sources.some((s) => /(^|\/)certs?(\/|$)|\.(key|pem|crt)$/.test(s)), `line ${copy.line}: copies no certificate material`);
    }
    for (const variable of [...all(stage, 'ENV'), ...all(stage, 'ARG')]) {
      t.notMatch(variable.args, /(SECRET|TOKEN|PASSWORD|KEY)\b/i, `line ${variable.line}: no secret in ENV/ARG`);
    }
  }
  t.same(all(runtime, 'ADD'), [], 'COPY only: ADD could fetch URLs or unpack archives');
});

t.test('.dockerignore keeps host artefacts and key material out of the context', async (t) => {
  for (const path of ['node_modules', 'dist/src/main.js', 'certs/tls.key', 'certs/README.md', '.git/HEAD', '.tap/x', 'test/a.test.ts', 'bench/run.ts', 'src/x/server.key', 'deep/a/b.pem', '.tools/bin/helm', '.node26/x', '.node22/x', 'charts/x', 'scripts/setup.sh', 'a-new-file']) {
    t.ok(isIgnored(path, ignoreRules), `${path} stays out`);
  }
  for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.package.json', 'src/main.ts', 'scripts/bundle-server.mjs', 'policies/example.yaml']) {
    t.notOk(isIgnored(path, ignoreRules), `${path} is in the context`);
  }
});

t.test('everything copied from the context exists and is not ignored', async (t) => {
  for (const stage of dockerfile.stages) {
    for (const copy of all(stage, 'COPY').map(copySources).filter((c) => c.from === undefined)) {
      for (const source of copy.sources) {
        t.notOk(isIgnored(source, ignoreRules), `${source} is in the build context`);
        await t.resolves(access(join(ROOT, source)), `${source} exists in the repository`);
      }
    }
  }
});

t.test('the parsers read what they claim', async (t) => {
  const parsed = parseDockerfile('ARG IMG=node:1\n# c\nFROM ${IMG} AS one\nRUN a \\\n  && b\nFROM --platform=x $IMG\nENTRYPOINT node x.js\n');
  t.same(parsed.stages.map((s) => [s.image, s.name]), [['node:1', 'one'], ['node:1', undefined]]);
  t.equal(parsed.stages[0]!.instructions[0]!.args, 'a && b', 'continuations joined');
  t.equal(execFormArgs(parsed.stages[1]!.instructions[0]!), undefined, 'shell form is recognised as such');
  const rules = parseDockerignore('dist\n**/*.key\n!keep.key\n');
  t.ok(isIgnored('dist/a/b.js', rules));
  t.ok(isIgnored('a/b/c.key', rules));
  t.notOk(isIgnored('keep.key', rules), 'a later exception re-includes');
  t.notOk(isIgnored('distance.txt', rules), 'no prefix match');
});

t.test('the image is a base for your own handlers: the package name resolves to the server it runs', async (t) => {
  const buildRuns = all(build, 'RUN').map((i) => i.args).join(' && ');
  // After the prune, which would remove a link it did not install.
  t.match(buildRuns, /npm prune --omit=dev[^&]*&&\s*ln -s \.\. node_modules\/kube-admission-server/, 'node_modules/kube-admission-server links /app, after the prune');
});

t.test('the scaffold’s Dockerfile: a build stage, then this version’s image plus compiled code only', async (t) => {
  const scaffold = parseDockerfile(await readFile(join(ROOT, 'scaffold', 'Dockerfile'), 'utf8'));
  t.equal(scaffold.globalArgs['BASE_IMAGE'], 'kube-admission-server:{{version}}', 'init writes its own version here');
  t.equal(scaffold.globalArgs['BUILD_IMAGE'], 'node:26-slim', 'built on the Node the base runs');
  const [scaffoldBuild, final] = scaffold.stages;
  t.equal(scaffold.stages.length, 2);
  t.same(all(scaffoldBuild!, 'RUN').map((i) => i.args), ['npm ci --no-audit --no-fund', 'npx tsc -p tsconfig.json'], 'a locked install, then the compiler');
  t.equal(final!.image, 'kube-admission-server:{{version}}', 'FROM the BASE_IMAGE argument');
  t.same(all(final!, 'RUN'), [], 'nothing installed into the runtime: no npm there anyway');
  t.same(all(final!, 'USER'), [], 'the base image’s uid 1000 carries over');
  const copies = all(final!, 'COPY').map(copySources);
  t.same(copies.map((c) => c.from), [scaffoldBuild!.name, scaffoldBuild!.name], 'only what the build stage made');
  t.same(copies.flatMap((c) => c.sources).sort(), ['/build/dist/src', '/build/package.json'], 'compiled sources and the "type": "module" of package.json, no tests, no node_modules');
  t.same(execFormArgs(last(final!, 'ENTRYPOINT')!), ['node', 'handlers/dist/src/main.js'], 'node as PID 1, exec form, the compiled main');
});
