import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into dist/console-app (CONSOLE_OUT_DIR for the browser tests), served by Nest at /console/.
export default defineConfig({
  root: __dirname,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: process.env.CONSOLE_OUT_DIR ?? resolve(__dirname, '../dist/console-app'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // No inline modulepreload polyfill, no inlined assets: everything is a file under the CSP's 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  // `npm run dev:console`: the API of `npm run dev`, as if from its own origin (the Origin check).
  server: {
    proxy: {
      '/api': {
        target: 'http://localhost:3000',
        configure: (proxy) => proxy.on('proxyReq', (request) => request.setHeader('origin', 'http://localhost:3000')),
      },
    },
  },
});
