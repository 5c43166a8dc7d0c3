import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../admission/types.js';
import type { Manifest } from '../kube/evaluation/evaluate-objects.js';

/** One object of the input, with where it came from (for messages). */
export type { Manifest } from '../kube/evaluation/evaluate-objects.js';

/** Bad input: names the file and document. Commands exit 2 on it. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The files a path stands for: itself, or a folder's YAML/JSON files (recursively, sorted). */
async function filesOf(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new ManifestError(`${path}: cannot read: ${(error as Error).message}`);
  }
  if (!info.isDirectory()) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const nested = await Promise.all(
    entries.map((entry) => {
      const child = join(path, entry.name);
      if (entry.isDirectory()) return filesOf(child);
      return Promise.resolve(MANIFEST_EXTENSIONS.has(extname(entry.name)) ? [child] : []);
    }),
  );
  return nested.flat();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The objects of one document: the object itself, or the items of a `List` (kind ...List with items). */
function objectsOf(value: unknown, where: string): Manifest[] {
  if (value === null || value === undefined) return [];
  if (!isRecord(value)) throw new ManifestError(`${where}: not a Kubernetes object (a mapping with apiVersion and kind)`);
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
    return value.items.flatMap((item, index) => objectsOf(item, `${where} item ${index + 1}`));
  }
  if (typeof value.apiVersion !== 'string' || typeof value.kind !== 'string' || value.apiVersion === '' || value.kind === '') {
    throw new ManifestError(`${where}: missing apiVersion or kind`);
  }
  const metadata = value.metadata;
  if (!isRecord(metadata) || (typeof metadata.name !== 'string' && typeof metadata.generateName !== 'string')) {
    throw new ManifestError(`${where}: ${value.kind} has no metadata.name`);
  }
  return [{ object: value as KubeObject, source: where }];
}

/** Parses one file's (or stdin's) text: multi-document YAML or JSON. */
export function parseManifests(text: string, file: string): Manifest[] {
  const documents = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(documents)) return [];
  return documents.flatMap((document, index) => {
    const where = `${file} document ${index + 1}`;
    const error = document.errors[0];
    if (error) throw new ManifestError(`${where}: invalid YAML: ${error.message.split('\n')[0]}`);
    return objectsOf(document.toJSON(), where);
  });
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Every object of `paths` (files, folders, `-` for stdin), in order. */
export async function readManifests(paths: readonly string[], stdin: NodeJS.ReadableStream = process.stdin): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  for (const path of paths) {
    if (path === '-') {
      manifests.push(...parseManifests(await readStdin(stdin), '<stdin>'));
      continue;
    }
    for (const file of await filesOf(path)) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new ManifestError(`${file}: cannot read: ${(error as Error).message}`);
      }
      manifests.push(...parseManifests(text, file));
    }
  }
  return manifests;
}
