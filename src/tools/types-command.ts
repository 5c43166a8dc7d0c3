import { writeFile } from 'node:fs/promises';
import { crdTypesSource } from './crd-types.js';
import { ManifestError, readManifests } from './manifests.js';
import { TOOL_BAD_INPUT, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

/** What `types` is told: the CRD files and where the module goes (stdout when unset). */
export interface TypesOptions {
  crdFiles: string[];
  outFile?: string;
}

/** `kube-admission-server types --crd FILE`: the TypeScript types of the CRDs' objects; exit 2 on bad input. */
export async function runTypes(options: TypesOptions, io: ToolIo): Promise<number> {
  try {
    const manifests = await readManifests(options.crdFiles, io.stdin);
    const crds = manifests.filter((m) => m.object.kind === 'CustomResourceDefinition');
    if (crds.length === 0) throw new ToolInputError(`no CustomResourceDefinition in ${options.crdFiles.join(', ')}`);
    const source = crdTypesSource(crds.map((m) => ({ object: m.object, where: `${m.source}` })));
    if (options.outFile) {
      await writeFile(options.outFile, source);
      io.stderr(`wrote ${options.outFile}: ${crds.map((m) => m.object.metadata?.name).join(', ')}\n`);
    } else io.stdout(source);
    return TOOL_OK;
  } catch (error) {
    if (error instanceof ToolInputError || error instanceof ManifestError) {
      io.stderr(`kube-admission-server types: ${error.message}\n`);
      return TOOL_BAD_INPUT;
    }
    throw error;
  }
}
