/** `npm run docs:tables`: rewrites the generated blocks of docs/configuration.md in place. */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIGURATION_DOC, withGeneratedBlocks } from './docs-tables.js';

const path = new URL(`../../${CONFIGURATION_DOC}`, import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withGeneratedBlocks(before);
if (after !== before) writeFileSync(path, after);
console.log(`${CONFIGURATION_DOC}: ${after === before ? 'already current' : 'tables rewritten'}`);
