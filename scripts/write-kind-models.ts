/** `npm run generate:kind-models`: rewrites src/admission/kinds/models.ts from @kubernetes/client-node's models. */
import { readFileSync, writeFileSync } from 'node:fs';
import { KIND_MODELS_FILE, kindModelsSource } from './kind-models.js';

const path = new URL(`../../${KIND_MODELS_FILE}`, import.meta.url);
let before = '';
try {
  before = readFileSync(path, 'utf8');
} catch {
  // first run: no file yet
}
const after = await kindModelsSource();
if (after !== before) writeFileSync(path, after);
console.log(`${KIND_MODELS_FILE}: ${after === before ? 'already current' : 'rewritten'}`);
