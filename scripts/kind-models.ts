/**
 * Writes src/admission/kinds/models.ts: the types of the built-in kinds' objects as they arrive in an
 * AdmissionReview, generated from the models of @kubernetes/client-node (the same OpenAPI
 * source, version-pinned with the dependency). Generated rather than imported because importing
 * one client-node model pulls in every declaration of the library (about 900 files: its
 * IntOrString lives next to the whole API), which costs a user's type-check seconds
 * (BENCHMARKS.md, "Handler projects and dependencies"); and because a review carries timestamps as strings, where the models say Date.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { BUILT_IN_KIND_TABLE } from '../src/admission/kinds/kind-table.js';

export const KIND_MODELS_FILE = 'src/admission/kinds/models.ts';

const require = createRequire(import.meta.url);
const CLIENT_PACKAGE = require.resolve('@kubernetes/client-node/package.json');
const MODELS_DIR = join(dirname(CLIENT_PACKAGE), 'dist', 'gen', 'models');

/** The client-node class of a kind: `V1Pod`, `V2HorizontalPodAutoscaler`. */
export function modelClassOf(kind: string, version: string): string {
  return `V${version.slice(1)}${kind}`;
}

interface Property {
  name: string;
  optional: boolean;
  type: string;
  doc: string | undefined;
}

interface Model {
  name: string;
  doc: string | undefined;
  properties: Property[];
  references: string[];
}

/** What a review carries instead of the client-side types: JSON strings and numbers. */
const WIRE_TYPES: readonly [RegExp, string][] = [
  [/\bV1MicroTime\b/g, 'string'],
  [/\bDate\b/g, 'string'],
  [/\bIntOrString\b/g, 'number | string'],
  [/\bany\b/g, 'unknown'],
];

function docOf(node: ts.Node, source: ts.SourceFile): string | undefined {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const last = ranges.at(-1);
  if (!last) return undefined;
  const text = source.text.slice(last.pos, last.end);
  if (!text.startsWith('/**')) return undefined;
  const body = text
    .replace(/^\/\*\*|\*\/$/g, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .filter((line) => line !== '')
    .join(' ')
    .replace(/\*\//g, '*\\/');
  return body === '' ? undefined : body;
}

function wireType(text: string): string {
  let result = text.replace(/\s+/g, ' ');
  for (const [pattern, replacement] of WIRE_TYPES) result = result.replace(pattern, replacement);
  return result;
}

/** A model class at run time: its attribute map says each property's name on the wire. */
interface ModelClass {
  attributeTypeMap?: readonly { name: string; baseName: string }[];
}

/** Wire names of a model's properties, where client-node renamed them (`_default` is `default`). */
function wireNames(clientModels: Record<string, unknown>, name: string): Map<string, string> {
  const attributes = (clientModels[name] as ModelClass | undefined)?.attributeTypeMap ?? [];
  return new Map(attributes.map((a) => [a.name, a.baseName]));
}

function readModel(name: string, clientModels: Record<string, unknown>): Model {
  const wire = wireNames(clientModels, name);
  const path = join(MODELS_DIR, `${name}.d.ts`);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const declaration = source.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name);
  if (!declaration) throw new Error(`${path}: no class ${name}`);
  const imported = new Set(
    source.statements
      .filter(ts.isImportDeclaration)
      .filter((i) => (i.moduleSpecifier as ts.StringLiteral).text.startsWith('../models/'))
      .flatMap((i) => (i.importClause?.namedBindings && ts.isNamedImports(i.importClause.namedBindings) ? i.importClause.namedBindings.elements.map((e) => e.name.text) : [])),
  );
  const properties: Property[] = [];
  for (const member of declaration.members) {
    if (!ts.isPropertyDeclaration(member) || member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword) || !member.type) continue;
    const propertyName = ts.isStringLiteral(member.name) || ts.isIdentifier(member.name) ? member.name.text : member.name.getText(source);
    properties.push({ name: wire.get(propertyName) ?? propertyName, optional: member.questionToken !== undefined, type: wireType(member.type.getText(source)), doc: docOf(member, source) });
  }
  return { name, doc: docOf(declaration, source), properties, references: [...imported] };
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function render(model: Model): string {
  const lines = [`/** ${model.doc ?? `${model.name}, as a review carries it.`} */`, `export type ${model.name} = {`];
  for (const property of model.properties) {
    if (property.doc) lines.push(`  /** ${property.doc} */`);
    lines.push(`  ${propertyKey(property.name)}${property.optional ? '?' : ''}: ${property.type};`);
  }
  lines.push('};');
  return lines.join('\n');
}

/** The whole generated file, for the built-in kinds of the table and every type they reach. */
export async function kindModelsSource(): Promise<string> {
  const clientModels = (await import('@kubernetes/client-node')) as unknown as Record<string, unknown>;
  const version = (JSON.parse(readFileSync(CLIENT_PACKAGE, 'utf8')) as { version: string }).version;
  const roots = Object.values(BUILT_IN_KIND_TABLE).map((k) => modelClassOf(k.kind, k.version));
  const models = new Map<string, Model>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (models.has(name)) continue;
    const model = readModel(name, clientModels);
    models.set(name, model);
    queue.push(...model.references.filter((r) => !models.has(r)));
  }
  const kindEntries = Object.values(BUILT_IN_KIND_TABLE).map((k) => `  ${k.kind}: ${modelClassOf(k.kind, k.version)};`);
  return [
    `// Generated by \`npm run generate:kind-models\` from @kubernetes/client-node ${version}: do not edit.`,
    '// The objects of the built-in kinds as an AdmissionReview carries them (JSON: timestamps are',
    '// strings, int-or-string fields either), for typed webhooks (`defineValidatingWebhook({ kind })`).',
    '',
    '/** The object type of each built-in kind a typed webhook may name. */',
    'export interface BuiltInKindObjects {',
    ...kindEntries,
    '}',
    '',
    ...[...models.values()].sort((a, b) => a.name.localeCompare(b.name)).map((m) => `${render(m)}\n`),
  ].join('\n');
}
