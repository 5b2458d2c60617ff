// The operator console: a Preact single-page app served by the gateway at /manager (see
// apps/gateway/src/console). Everything is bundled (no CDN) and no script is inlined, so a strict CSP holds.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/manager/',
  // Preact's automatic JSX runtime, through Vite's own transform (no plugin needed).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: {
      react: 'preact/compat',
      'react-dom': 'preact/compat',
      // The API's contract (plain types and constants), the only lib the console may import.
      '@gw/contracts': fileURLToPath(new URL('../../libs/contracts/src/index.ts', import.meta.url)),
    },
  },
  build: {
    outDir: process.env.MANAGER_OUT_DIR ?? fileURLToPath(new URL('../../dist/apps/manager', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Scripts and styles as files: nothing inline, so the gateway's CSP needs no 'unsafe-inline'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
    reportCompressedSize: false,
  },
  logLevel: process.env.MANAGER_BUILD_QUIET ? 'warn' : 'info',
});
