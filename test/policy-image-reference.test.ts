import fc from 'fast-check';
import t from 'tap';
import { imageFromPrefix, normalizeImage, normalizeRegistryPrefix, registryPrefixProblem } from '../src/admission/image-reference.js';
import { parseQuantity } from '../src/admission/quantity.js';

t.test('normalizeImage applies the Docker Hub defaults', async (t) => {
  const cases: [string, string][] = [
    ['nginx', 'docker.io/library/nginx'],
    ['nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['nginx@sha256:abc', 'docker.io/library/nginx@sha256:abc'],
    ['acme/app:1', 'docker.io/acme/app:1'],
    ['docker.io/nginx', 'docker.io/library/nginx'],
    ['index.docker.io/acme/app', 'docker.io/acme/app'],
    ['Docker.IO/library/redis', 'docker.io/library/redis'],
    ['ghcr.io/acme/app:2', 'ghcr.io/acme/app:2'],
    ['localhost/app', 'localhost/app'],
    ['localhost:5000/app', 'localhost:5000/app'],
    ['registry.example.com:443/team/app', 'registry.example.com:443/team/app'],
  ];
  for (const [image, expected] of cases) t.equal(normalizeImage(image), expected, image);
});

t.test('normalizing twice changes nothing', async (t) => {
  const segment = fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,8}[a-z0-9])?$/);
  const image = fc.tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.option(segment)).map(([parts, tag]) => parts.join('/') + (tag ? `:${tag}` : ''));
  fc.assert(fc.property(image, (reference) => normalizeImage(normalizeImage(reference)) === normalizeImage(reference)));
  t.pass('property held for the generated references');
});

t.test('registry prefixes match at path boundaries only', async (t) => {
  t.equal(normalizeRegistryPrefix('ghcr.io/acme'), 'ghcr.io/acme/');
  t.equal(normalizeRegistryPrefix('index.docker.io/library/'), 'docker.io/library/');
  t.ok(imageFromPrefix('ghcr.io/acme/app', 'ghcr.io/acme/'));
  t.notOk(imageFromPrefix('ghcr.io/acme-evil/app', 'ghcr.io/acme/'));
  t.ok(imageFromPrefix('nginx', 'docker.io/'));
  t.notOk(imageFromPrefix('registry.example.com.evil.io/x', 'registry.example.com/'));
});

t.test('registryPrefixProblem', async (t) => {
  for (const ok of ['docker.io/', 'ghcr.io/acme', 'localhost:5000/', 'localhost', 'registry.example.com']) t.equal(registryPrefixProblem(ok), undefined, ok);
  t.match(registryPrefixProblem('nginx'), /must start with a registry host/);
  t.match(registryPrefixProblem('acme/app'), /must start with a registry host/);
  t.match(registryPrefixProblem('ghcr.io/acme/app@sha256:1'), /without tag or digest/);
  t.match(registryPrefixProblem(' ghcr.io/'), /must not contain spaces/);
});

t.test('parseQuantity', async (t) => {
  const cases: [string, number][] = [
    ['1', 1],
    ['100m', 0.1],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['128Mi', 128 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['2k', 2000],
    ['1e3', 1000],
    ['5E-1', 0.5],
  ];
  for (const [text, value] of cases) t.equal(parseQuantity(text), value, text);
  for (const bad of ['', 'lots', '-1', '1 Gi', '1gi', '1KiB']) t.equal(parseQuantity(bad), undefined, bad);
  // As resource.ParseQuantity: no digits read as 0 (its parseQuantityString).
  t.equal(parseQuantity('Mi'), 0, 'Mi');
  t.equal(parseQuantity('1E'), 1e18, '1E is exa, not an exponent');
  t.ok(parseQuantity('1Gi')! > parseQuantity('1G')!);
});
