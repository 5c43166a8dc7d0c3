import t from 'tap';
import { readFile } from 'node:fs/promises';
import { BUILTIN_TYPES } from '../local-cluster/fake-apiserver/builtin-types.js';
import { KIND_MODELS_FILE, kindModelsSource } from '../scripts/kind-models.js';
import { BUILT_IN_KIND_TABLE } from '../src/index.js';

t.test('the kind table says what the API double serves for every kind both know', async (t) => {
  let compared = 0;
  for (const info of Object.values(BUILT_IN_KIND_TABLE)) {
    const served = BUILTIN_TYPES.find((type) => type.kind === info.kind && type.group === info.group);
    if (!served) continue;
    compared++;
    t.same({ version: info.version, plural: info.plural, namespaced: info.namespaced }, { version: served.version, plural: served.resource, namespaced: served.namespaced }, info.kind);
  }
  t.ok(compared >= 20, `compared ${compared} kinds`);
});

t.test('src/admission/kinds/models.ts is what the generator writes from the installed @kubernetes/client-node', async (t) => {
  const committed = await readFile(new URL(`../${KIND_MODELS_FILE}`, import.meta.url), 'utf8');
  t.ok(committed === (await kindModelsSource()), 'run `npm run generate:kind-models` after changing the kind table or client-node');
  const block = (name: string): string => committed.slice(committed.indexOf(`export type ${name} = {`), committed.indexOf('\n};', committed.indexOf(`export type ${name} = {`)));
  t.match(block('V1ObjectMeta'), /\n {2}creationTimestamp\?: string;/, 'timestamps are strings, as a review carries them');
  t.match(block('V1JSONSchemaProps'), /\n {2}default\?: unknown;/, 'wire names, not client-node\'s renamed _default');
  t.match(block('V1JSONSchemaProps'), /\n {2}"x-kubernetes-int-or-string"\?: boolean;/);
  t.match(block('V1HTTPGetAction'), /\n {2}port: number \| string;/, 'int-or-string');
  const typeLines = committed.split('\n').filter((line) => !line.trimStart().startsWith('/**'));
  t.same(typeLines.filter((line) => /\bDate\b|IntOrString|\bany\b/.test(line)), [], 'no client-side types');
});
