/**
 * `npm run kube-defaults -- --openapi DIR --kubernetes-src DIR --api-src DIR --kubernetes 1.35 ...`
 * writes src/kube/evaluation/kube-defaults/kubernetes-<version>.json: the field types and OpenAPI defaults of
 * the built-in kinds (from the OpenAPI v3 documents kube-apiserver publishes, api/openapi-spec/v3
 * in kubernetes/kubernetes) and the hand-written Go defaulters translated into data
 * (pkg/apis/<group>/<version>/defaults.go, with the constants of k8s.io/api). Nothing here is
 * typed in by hand: to move to another release, run it on that release's files.
 *
 * --openapi DIR         the v3 documents: api__v1_openapi.json ... (kubernetes' layout) or api/v1.json,
 *                       apis/apps/v1.json ... (the layout kubectl-validate keeps per release)
 * --kubernetes-src DIR  a kubernetes checkout (pkg/apis/<group>/<version>/defaults.go are read)
 * --api-src DIR         a k8s.io/api checkout of the same release (constants: <group>/<version>/*.go)
 * --gates-on A,B        feature gates on by default in that release that the defaulters test
 * --source KEY=TEXT     provenance written into the file (repeatable)
 *
 * kubernetes-1.35.json was made with kubectl-validate's copy of the 1.35 documents
 * (pkg/openapiclient/builtins/1.35), pkg/apis/{core,apps,batch,networking}/v1/defaults.go of
 * kubernetes/kubernetes, k8s.io/api at v0.35.7 and `--gates-on StatefulSetAutoDeletePVC` (GA and
 * locked on since 1.32); the file's `sources` records the commits.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FieldSchema, JsonValue, KubeDefaultsData, SchemaTypes } from '../../src/kube/evaluation/kube-defaults/schema-types.js';
import { parseGoFunctions, translateDefaulter, type TranslateContext, type Untranslated } from './go-defaulters.js';

/** The API groups whose kinds are defaulted: every stable group a policy is likely to match. */
const GROUP_VERSIONS: Array<{ group: string; version: string; pkg: string }> = [
  { group: '', version: 'v1', pkg: 'core' },
  { group: 'apps', version: 'v1', pkg: 'apps' },
  { group: 'batch', version: 'v1', pkg: 'batch' },
  { group: 'networking.k8s.io', version: 'v1', pkg: 'networking' },
  { group: 'policy', version: 'v1', pkg: 'policy' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', pkg: 'rbac' },
  { group: 'autoscaling', version: 'v2', pkg: 'autoscaling' },
  { group: 'autoscaling', version: 'v1', pkg: 'autoscaling' },
  { group: 'storage.k8s.io', version: 'v1', pkg: 'storage' },
  { group: 'scheduling.k8s.io', version: 'v1', pkg: 'scheduling' },
  { group: 'coordination.k8s.io', version: 'v1', pkg: 'coordination' },
  { group: 'discovery.k8s.io', version: 'v1', pkg: 'discovery' },
  { group: 'node.k8s.io', version: 'v1', pkg: 'node' },
  { group: 'certificates.k8s.io', version: 'v1', pkg: 'certificates' },
  { group: 'admissionregistration.k8s.io', version: 'v1', pkg: 'admissionregistration' },
];

/** Types whose JSON form is not their Go structure. */
const SPECIAL: Record<string, FieldSchema> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { t: 'quantity' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { t: 'int-or-string' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { t: 'time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { t: 'time' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { t: 'any' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': { t: 'any' },
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': { t: 'any' },
};

type OpenApiSchema = {
  type?: string;
  $ref?: string;
  allOf?: OpenApiSchema[];
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema | boolean;
  properties?: Record<string, OpenApiSchema>;
  default?: JsonValue;
  oneOf?: OpenApiSchema[];
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
};

function openApiFile(dir: string, group: string, version: string): string | undefined {
  const candidates = group === '' ? [`api__${version}_openapi.json`, join('api', `${version}.json`)] : [`apis__${group}__${version}_openapi.json`, join('apis', group, `${version}.json`)];
  return candidates.map((c) => join(dir, c)).find((c) => existsSync(c));
}

function refName(schema: OpenApiSchema): string | undefined {
  const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
  return ref?.replace('#/components/schemas/', '');
}

class SchemaCollector {
  readonly types: SchemaTypes = {};
  constructor(private readonly all: Record<string, OpenApiSchema>) {}

  field(schema: OpenApiSchema): FieldSchema {
    const ref = refName(schema);
    const compact: FieldSchema = ref ? this.reference(ref) : this.inline(schema);
    return schema.default !== undefined ? { ...compact, d: schema.default } : compact;
  }

  reference(name: string): FieldSchema {
    const special = SPECIAL[name];
    if (special) return { ...special };
    const definition = this.all[name];
    if (!definition) return { t: 'any' };
    if (!definition.properties) return this.inline(definition);
    this.collect(name);
    return { r: name };
  }

  inline(schema: OpenApiSchema): FieldSchema {
    if (schema.type === 'array' && schema.items) return { i: this.field(schema.items) };
    if (schema.type === 'object' && typeof schema.additionalProperties === 'object') return { m: this.field(schema.additionalProperties) };
    if (schema.type && schema.type !== 'object') return { t: schema.type };
    return { t: 'any' };
  }

  collect(name: string): void {
    if (this.types[name]) return;
    const definition = this.all[name]!;
    const fields: Record<string, FieldSchema> = {};
    this.types[name] = { f: fields };
    for (const [json, schema] of Object.entries(definition.properties ?? {})) fields[json] = this.field(schema);
  }
}

/** The constants of a k8s.io/api package: `Name Type = value` and `Name = value` in const blocks. */
function readConstants(dir: string): Map<string, JsonValue> {
  const constants = new Map<string, JsonValue>();
  if (!existsSync(dir)) return constants;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const block of text.matchAll(/\nconst \(([\s\S]*?)\n\)/g)) {
      for (const line of block[1]!.split('\n')) {
        const m = /^\s*([A-Z]\w*)(?:\s+[\w.]+)?\s*=\s*("(?:[^"\\]|\\.)*"|-?(?:0[0-7]+|\d+)|true|false)\s*(?:\/\/.*)?$/.exec(line);
        if (!m) continue;
        const raw = m[2]!;
        const value: JsonValue = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw === 'true' || raw === 'false' ? raw === 'true' : /^-?0[0-7]+$/.test(raw) ? parseInt(raw, 8) : Number(raw);
        constants.set(m[1]!, value);
      }
    }
    for (const m of text.matchAll(/\nconst ([A-Z]\w*)(?:\s+[\w.]+)?\s*=\s*("(?:[^"\\]|\\.)*"|\d+)\s*\n/g)) constants.set(m[1]!, m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : Number(m[2]));
  }
  return constants;
}

function imports(source: string): Map<string, string> {
  const aliases = new Map<string, string>();
  const block = /import \(([\s\S]*?)\)/.exec(source)?.[1] ?? '';
  for (const m of block.matchAll(/^\s*(?:(\w+)\s+)?"([^"]+)"/gm)) {
    const path = m[2]!;
    aliases.set(m[1] ?? path.split('/').at(-1)!, path);
  }
  return aliases;
}

/** One definition, defaulter or note a line: diffs between releases stay readable. */
function linePerEntry(data: KubeDefaultsData): string {
  const section = (value: unknown): string => {
    if (Array.isArray(value)) return `[\n${value.map((v) => `    ${JSON.stringify(v)}`).join(',\n')}\n  ]`;
    if (value && typeof value === 'object') return `{\n${Object.entries(value).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(',\n')}\n  }`;
    return JSON.stringify(value);
  };
  return `{\n${Object.entries(data).map(([key, value]) => `  ${JSON.stringify(key)}: ${section(value)}`).join(',\n')}\n}\n`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      openapi: { type: 'string' },
      'kubernetes-src': { type: 'string' },
      'api-src': { type: 'string' },
      kubernetes: { type: 'string' },
      'gates-on': { type: 'string', default: '' },
      source: { type: 'string', multiple: true, default: [] },
      out: { type: 'string' },
    },
  });
  const { openapi, kubernetes } = values;
  const kubernetesSrc = values['kubernetes-src'];
  const apiSrc = values['api-src'];
  if (!openapi || !kubernetesSrc || !apiSrc || !kubernetes) throw new Error('give --openapi, --kubernetes-src, --api-src and --kubernetes (see the comment at the top of this script)');

  const all: Record<string, OpenApiSchema> = {};
  const kinds: Record<string, string> = {};
  const kindDefinitions: string[] = [];
  for (const { group, version } of GROUP_VERSIONS) {
    const file = openApiFile(openapi, group, version);
    if (!file) throw new Error(`${openapi}: no OpenAPI document for ${group || 'core'}/${version}`);
    const schemas = (JSON.parse(readFileSync(file, 'utf8')) as { components: { schemas: Record<string, OpenApiSchema> } }).components.schemas;
    Object.assign(all, schemas);
    for (const [name, schema] of Object.entries(schemas)) {
      for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
        if (gvk.group !== group || gvk.version !== version || gvk.kind.endsWith('List') || !schema.properties?.['metadata']) continue;
        kinds[`${group ? `${group}/` : ''}${version}/${gvk.kind}`] = name;
        kindDefinitions.push(name);
      }
    }
  }
  const collector = new SchemaCollector(all);
  for (const name of kindDefinitions) collector.collect(name);

  const gatesOn = new Set(values['gates-on'].split(',').filter(Boolean));
  const gatesSeen = new Map<string, boolean>();
  const defaulters: KubeDefaultsData['defaulters'] = {};
  const untranslated: Untranslated[] = [];
  const constantsByPath = new Map<string, Map<string, JsonValue>>();
  const constantsOf = (importPath: string): Map<string, JsonValue> => {
    const dir = importPath.replace(/^k8s\.io\/api\//, '');
    if (!constantsByPath.has(dir)) constantsByPath.set(dir, readConstants(join(apiSrc, dir)));
    return constantsByPath.get(dir)!;
  };
  for (const { version, pkg } of GROUP_VERSIONS) {
    const file = join(kubernetesSrc, 'pkg', 'apis', pkg, version, 'defaults.go');
    if (!existsSync(file)) continue;
    const source = readFileSync(file, 'utf8');
    const aliases = imports(source);
    const definitionOf = (alias: string, name: string): string | undefined => {
      const path = aliases.get(alias);
      if (!path?.startsWith('k8s.io/api/')) return undefined;
      const definition = `io.k8s.api.${path.replace('k8s.io/api/', '').replace('/', '.')}.${name}`;
      return all[definition] ? definition : undefined;
    };
    const ctx: TranslateContext = {
      types: collector.types,
      definitionOf,
      constant: (alias, name) => {
        if (alias === 'time' || alias === 'math') return undefined;
        const path = aliases.get(alias);
        return path?.startsWith('k8s.io/api/') ? constantsOf(path).get(name) : undefined;
      },
      featureGateOn: (gate) => gatesOn.has(gate),
      gatesSeen,
    };
    for (const fn of parseGoFunctions(source)) {
      if (!fn.name.startsWith('SetDefaults_')) continue;
      const definition = definitionOf(fn.type.pkg, fn.type.name);
      const where = `${pkg}/${version}`;
      if (!definition) {
        untranslated.push({ function: `${where} ${fn.name}`, line: 0, statement: `func ${fn.name}`, reason: `${fn.type.name} has no OpenAPI definition of its own` });
        continue;
      }
      collector.collect(definition);
      const before = untranslated.length;
      const ops = translateDefaulter(ctx, fn, definition, untranslated);
      for (const entry of untranslated.slice(before)) entry.function = `${where} ${entry.function}`;
      if (ops.length > 0) defaulters[definition] = ops;
    }
  }

  const data: KubeDefaultsData = {
    kubernetes,
    sources: Object.fromEntries(values.source.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)])),
    kinds,
    types: collector.types,
    defaulters,
    featureGates: Object.fromEntries([...gatesSeen].sort()),
    untranslated: untranslated.map(({ function: fn, statement, reason }) => ({ function: fn, statement, reason })),
  };
  const out = values.out ?? new URL(`../../../src/kube/evaluation/kube-defaults/kubernetes-${kubernetes}.json`, import.meta.url).pathname;
  writeFileSync(out, linePerEntry(data));
  console.log(`${out}: ${Object.keys(kinds).length} kinds, ${Object.keys(collector.types).length} types, ${Object.keys(defaulters).length} defaulters, ${untranslated.length} statements not translated`);
  for (const u of untranslated) console.log(`  not translated: ${u.function}: ${u.statement} (${u.reason})`);
}

main();
