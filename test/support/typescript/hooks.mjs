/**
 * How tap's test processes run TypeScript: each .ts module transpiled by esbuild (already a dev
 * dependency, for the bundle) with an inline source map, in place of tap's ts-node plugin, which
 * loads the TypeScript compiler into every test process (measured: a one-assertion file costs
 * 3.6 s of CPU under ts-node, 1.2 s here; ten ordinary files 79 s, 43 s here). Preloaded with
 * tap's "node-arg" (package.json), with tap's plugin set to "type-strip-only" so that it adds no
 * loader of its own; Node's own type stripping would not do: the sources use parameter
 * properties, and import `.ts` files by their `.js` names. Types are not checked here, as they
 * were not under ts-node (transpile-only): `npm run lint` (tsc --noEmit) does that.
 */
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

// What tsconfig.json sets that changes emitted JavaScript (target ES2022: define semantics for fields).
const TSCONFIG_RAW = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: false } };

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      // NodeNext style: a relative `./x.js` names the source `./x.ts`.
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) throw error;
      return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
    }
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !/\.[cm]?ts$/.test(url)) return nextLoad(url, context);
    const path = fileURLToPath(url);
    const { code } = transformSync(readFileSync(path, 'utf8'), {
      loader: 'ts',
      format: url.endsWith('.cts') ? 'cjs' : 'esm',
      sourcefile: path,
      sourcemap: 'inline',
      tsconfigRaw: TSCONFIG_RAW,
    });
    return { format: url.endsWith('.cts') ? 'commonjs' : 'module', source: code, shortCircuit: true };
  },
});
