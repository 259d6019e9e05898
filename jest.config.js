/** Unit specs live beside the code (src/**\/*.spec.ts); end-to-end suites in test/. */
const transform = {
  '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  // @a2a-js/sdk's CommonJS build requires `jose`, which ships only as ES modules. Node
  // (≥ 20.19) loads that natively; Jest's own module loader does not, so Jest compiles it.
  '/node_modules/jose/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true } }],
  // The OTLP exporter loads `http` with a dynamic import(), which Jest's module loader
  // cannot run without --experimental-vm-modules; compiled to CommonJS it is a require.
  '/node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': [
    'ts-jest',
    { diagnostics: false, tsconfig: { allowJs: true } },
  ],
};
const transformIgnorePatterns = ['/node_modules/(?!(jose|@opentelemetry/otlp-exporter-base)/)'];

module.exports = {
  testTimeout: 60_000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
