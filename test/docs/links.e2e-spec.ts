import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slug(match[1])));
}

/**
 * The documents a user reads live in the repository: every relative link in README.md
 * and docs/*.md names a file of this checkout (and, with a #fragment, one of its
 * headings), and every path of the repository they name in `code` exists. A clone has
 * nothing outside it.
 */
describe('documentation links', () => {
  const documents = [
    join(ROOT, 'README.md'),
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(ROOT, 'docs', name)),
  ];

  it.each(documents.map((file) => [relative(ROOT, file), file]))(
    '%s links only to files in the repository',
    (_name, file) => {
      const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
          continue; // https:, mailto:
        }
        const [path, fragment] = target.split('#');
        const resolved = path === '' ? file : resolve(dirname(file), path);
        if (!resolved.startsWith(ROOT + '/') || !existsSync(resolved)) {
          broken.push(`${target}: no such file in the repository`);
        } else if (
          fragment &&
          statSync(resolved).isFile() &&
          resolved.endsWith('.md') &&
          !anchors(resolved).has(fragment)
        ) {
          broken.push(`${target}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
      expect(text).not.toMatch(/\.\.\/shared\//);
    },
  );

  it.each(documents.map((file) => [relative(ROOT, file), file]))(
    '%s names only files and folders the repository has',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      const missing: string[] = [];
      for (const match of text.matchAll(/`((?:src|test|console|scripts|docker|client|bench|docs)\/[^`\s]*)`/g)) {
        const named = match[1];
        const path = named.split('#')[0];
        if (/[*{<]/.test(path)) {
          continue; // a pattern or a placeholder
        }
        if (text.startsWith(' of `', match.index + match[0].length)) {
          continue; // another repository's file: "`docs/x.md` of `owner/repo`"
        }
        // A suite or a module may be named without its extension.
        if (!['', '.ts', '.e2e-spec.ts'].some((extension) => existsSync(join(ROOT, path + extension)))) {
          missing.push(named);
        }
      }
      expect(missing).toEqual([]);
    },
  );
});
