#!/usr/bin/env node
/**
 * `npm run build:bundle`: the compiled server entry (dist/src/main.js, from `npm run build` or
 * `npm run build:package`) and everything it imports in one file, dist/bundle/main.js, which the
 * image runs. Loading some 1,700 modules one by one (@kubernetes/client-node alone is over 800)
 * cost about half of a start; one file, parsed once and kept in Node's compile cache, does not.
 * Lazy `import()`s stay lazy: esbuild initialises such a module on its first import.
 *
 * The bundle sits two levels below the repository root, as dist/src/main.js does, so the paths
 * the server finds relative to its own file (policies/, schema/) stay right.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { stdout } from 'node:process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const entry = 'dist/src/main.js';
const outfile = 'dist/bundle/main.js';

/**
 * src/cel/engine/internals.ts imports cel-js's parser, which the package does not export,
 * by a URL computed at run time. Left so, the bundle would load a second, separate cel-js from
 * node_modules beside the bundled one; point the import at the same file statically instead.
 */
const celParserImport = {
  name: 'cel-parser-import',
  setup(build) {
    const parser = fileURLToPath(new URL('./parser.js', import.meta.resolve('@marcbachmann/cel-js')));
    build.onLoad({ filter: /[\\/]dist[\\/]src[\\/]cel[\\/]engine[\\/]internals\.js$/ }, async (args) => {
      const code = await readFile(args.path, 'utf8');
      const dynamic = /const entry = import\.meta\.resolve\('@marcbachmann\/cel-js'\);\s*const parserModule = \(?await import\(new URL\('\.\/parser\.js', entry\)\.href\)\)?/;
      if (!dynamic.test(code)) throw new Error(`${args.path}: the run-time import of cel-js's parser changed; update ${fileURLToPath(import.meta.url)}`);
      return { contents: code.replace(dynamic, `const parserModule = await import(${JSON.stringify(parser)})`), loader: 'js' };
    });
  },
};

/**
 * Node's built-in modules by require(), each where the module that uses it is initialised. Left as
 * `import` statements, esbuild hoists every one to the top of the bundle, so a start loads them all
 * (zlib, child_process, readline... for code it never runs) and builds an ES module facade of each,
 * which reads every export: reading node:http's `WebSocket` loads Node's internal undici (~10 ms of
 * CPU) for a server that never uses it. The same module objects, loaded later and without facades.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      // The require() in the stand-in below: left to the bundle's own require (see the banner).
      if (args.namespace === 'builtin-by-require') return { path: args.path, external: true };
      return { path: args.path, namespace: 'builtin-by-require' };
    });
    build.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * Code a start never runs, kept out of its way without changing what runs:
 * - node-fetch 2 takes `URL` from node:url and falls back to the whatwg-url package only where
 *   node:url has none (`Url.URL || whatwgUrl.URL`), which no supported Node is: whatwg-url and tr46
 *   (300 KB, and tr46 builds its Unicode table on load) become node:url's URL, the one used anyway.
 * - client-node's KubeConfig needs socks-proxy-agent (with socks and ip-address) only for a
 *   kubeconfig whose cluster has a socks proxy-url: loaded when such an agent is made, not at start.
 */
const deadWeight = {
  name: 'dead-weight',
  setup(build) {
    build.onResolve({ filter: /^whatwg-url$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]node-fetch[\\/]/.test(args.importer)) throw new Error(`${args.importer} imports whatwg-url: only node-fetch's import is replaced; check that it needs no more than URL`);
      return { path: 'whatwg-url', namespace: 'whatwg-url-from-node' };
    });
    build.onLoad({ filter: /.*/, namespace: 'whatwg-url-from-node' }, () => ({ contents: "module.exports = { URL: require('node:url').URL };", loader: 'js' }));
    build.onLoad({ filter: /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/ }, async (args) => {
      const code = await readFile(args.path, 'utf8');
      const staticImport = "import { SocksProxyAgent } from 'socks-proxy-agent';";
      const use = 'new SocksProxyAgent(';
      if (!code.includes(staticImport) || code.split(use).length !== 2) throw new Error(`${args.path}: its socks-proxy-agent import or use changed; update ${fileURLToPath(import.meta.url)}`);
      // require() of a bundled module in an ES module: esbuild initialises it on the first call.
      return { contents: code.replace(staticImport, '').replace(use, "new (require('socks-proxy-agent').SocksProxyAgent)("), loader: 'js' };
    });
  },
};

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.19',
  // Whitespace and syntax only: names stay, so stack traces and error names read as in the sources.
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  legalComments: 'eof',
  // CommonJS dependencies require() Node's built-in modules; an ES module has no `require`.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  plugins: [celParserImport, builtinsByRequire, deadWeight],
  logLevel: 'warning',
});

// esbuild keeps non-ASCII characters of regular expression literals (`µs` in duration patterns).
// One such character makes V8 hold and scan the whole multi-megabyte source as a two-byte string:
// escape every one as \uXXXX, which means the same in a string, a template, a regular expression,
// an identifier or a comment. After a backslash it would not: refuse rather than guess.
const source = readFileSync(outfile, 'utf8');
const ascii = source.replace(/[\u0080-\uffff]/g, (char, offset) => {
  if (source[offset - 1] === '\\') throw new Error(`${outfile}: a non-ASCII character after a backslash at offset ${offset}; cannot escape it safely`);
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
});
writeFileSync(outfile, ascii);
stdout.write(`${outfile}: ${(ascii.length / 1e6).toFixed(1)} MB from ${entry}\n`);
