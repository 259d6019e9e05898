import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBenchServer, table } from './lib';

/**
 * Issue 42: how well the directory's ranked search (`q`) finds the right agent —
 * NDCG@10 over graded judgments, per kind of query and overall. Not a timing bench:
 * it asserts nothing and measures no latency, so it may run on a busy machine.
 *
 * The data (bench/relevance/, described in its README.md): 212 agent cards of 53
 * capabilities, and 78 queries of three kinds — a task described in a sentence, a
 * skill named in a few words, a name fragment or misspelling. Judgments come from the
 * cards' capability labels, never from what the engine returns: 3 the capability
 * asked for, 2 a card whose second skill is it, 1 a related capability; a name query
 * judges only the agent it names (3).
 *
 * BENCH_DATABASE=embedded runs it on the embedded PGlite, which must give the same
 * figures. BENCH_VERBOSE=1 lists each query's NDCG and its top three.
 */
const K = 10;

type Kind = 'task' | 'skill' | 'name';

interface Card {
  agent_handle: string;
  display_name: string;
  description: string;
  skills: object[];
}

interface Judged {
  kind: Kind;
  q: string;
  target: string;
  /** Handle → grade (0–3); a handle not listed is 0. */
  judgments: Record<string, number>;
}

const DATA = join(__dirname, 'relevance');

/** Discounted cumulative gain of the first K grades. */
function dcg(grades: number[]): number {
  return grades.slice(0, K).reduce((sum, grade, i) => sum + (2 ** grade - 1) / Math.log2(i + 2), 0);
}

export function ndcg(ranked: string[], judgments: Record<string, number>): number {
  const ideal = dcg(Object.values(judgments).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((handle) => judgments[handle] ?? 0)) / ideal;
}

export async function run(): Promise<void> {
  const { cards } = JSON.parse(readFileSync(join(DATA, 'cards.json'), 'utf8')) as { cards: Card[] };
  const queries = JSON.parse(readFileSync(join(DATA, 'queries.json'), 'utf8')) as Judged[];
  const server = await startBenchServer({ PUBLIC_BASE_URL: 'https://agents.example.test' });
  try {
    const [{ id: organizationId }] = (await server.db.query(
      `INSERT INTO organizations (name) VALUES ('Relevance') RETURNING id`,
    )) as Array<{ id: string }>;
    await server.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, display_name, description, skills,
                               enabled, publicly_discoverable, created_at)
       SELECT c ->> 'agent_handle', $2, now(), c ->> 'display_name', c ->> 'description', c -> 'skills', true, true,
              now() - make_interval(secs => n::int)
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS cards(c, n)`,
      [JSON.stringify(cards), organizationId],
    );
    console.log(`${cards.length} cards, ${queries.length} queries\n`);

    const results: Array<{ query: Judged; score: number; top: string[] }> = [];
    for (const query of queries) {
      const res = await fetch(`${server.baseUrl}/a2a/directory?limit=${K}&q=${encodeURIComponent(query.q)}`);
      if (res.status !== 200) {
        throw new Error(`${query.q}: ${res.status} ${await res.text()}`);
      }
      const body = (await res.json()) as { agents: Array<{ agent_handle: string }> };
      const ranked = body.agents.map((agent) => agent.agent_handle);
      results.push({ query, score: ndcg(ranked, query.judgments), top: ranked.slice(0, 3) });
    }

    if (process.env.BENCH_VERBOSE) {
      table(
        results.map((r) => ({
          kind: r.query.kind,
          q: r.query.q,
          target: r.query.target,
          'NDCG@10': r.score.toFixed(3),
          top: r.top.join(' '),
        })),
      );
      console.log('');
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
    const kinds: Array<Kind | 'overall'> = ['task', 'skill', 'name', 'overall'];
    table(
      kinds.map((kind) => {
        const of = results.filter((r) => kind === 'overall' || r.query.kind === kind);
        return {
          queries: kind,
          count: of.length,
          'NDCG@10': mean(of.map((r) => r.score)).toFixed(3),
          'target first': `${of.filter((r) => r.query.judgments[r.top[0]] === 3).length}/${of.length}`,
        };
      }),
    );
  } finally {
    await server.close();
  }
}
