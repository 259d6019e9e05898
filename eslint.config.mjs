// @ts-check
// ESLint flat config. typescript-eslint's recommended rules everywhere (src/, test/, bench/,
// scripts/, client/, console/), plus type-aware rules on src/: the promise rules (an
// unawaited promise in the server is a lost error or an unhandled rejection) and exhaustive
// switches over unions (a member no case handles is a lint error). The other type-aware
// sets (no-unsafe-*) are not on: supertest bodies are `any` by design, and they would
// double the lint time for little. Formatting is Prettier's job: eslint-config-prettier,
// last, turns off every rule that would fight it.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', 'dist/', 'coverage/', 'data/', 'client/schema.ts'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are deliberate: an omitted destructured field, an unused parameter.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Input sanitising matches NUL and other control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Tests and benchmarks read untyped JSON bodies, reach into libraries' metadata
    // (class-validator's storage is keyed by `Function`) and require() the files they
    // discover at run time (repositories, migrations).
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
    // A CommonJS file imports with require() (bench/register.js runs before any TypeScript loader).
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
  {
    // After eslint-config-prettier, which turns `curly` off: braces on every branch, and
    // === except against null (== null also covers undefined).
    rules: { curly: ['error', 'all'], eqeqeq: ['error', 'always', { null: 'ignore' }] },
  },
);
