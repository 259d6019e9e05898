import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { bearer, createEnabledIdentity, signup, unique, type ConsoleAccount } from '../support/fixtures';

/** A word no other identity of the file uses. */
const marker = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

/** A marker of letters only (feedback takes words of letters). */
const letters = (prefix: string) => marker(prefix).replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)]);

/** The word with its third and fourth letters swapped: a misspelling. */
const swapped = (word: string) => `${word.slice(0, 2)}${word[3]}${word[2]}${word.slice(4)}`;

type Agent = { agent_handle: string };

/** Ranked search and the card filters (docs/api.md §4, "Ranked search"). */
describe('ranked search', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  const otherName = unique('Other');

  beforeAll(async () => {
    t = await startApp({ PUBLIC_BASE_URL: 'https://agents.example.test' });
    acme = await signup(t, unique('Acme'));
    other = await signup(t, otherName);
  });
  afterAll(() => t.close());

  /** Lists an identity in the public directory. */
  async function list(account: ConsoleAccount, handle: string) {
    await t
      .http()
      .patch(`/api/v1/identities/${handle}/settings`)
      .set(bearer(account))
      .send({ publicly_discoverable: true })
      .expect(200);
  }

  async function listed(account: ConsoleAccount, body: Record<string, unknown>) {
    const identity = await createEnabledIdentity(t, account, body);
    await list(account, identity.handle);
    return identity.handle;
  }

  const find = async (query: Record<string, string | number>) =>
    ((await t.http().get('/a2a/directory').query(query).expect(200)).body.agents as Agent[]).map((a) => a.agent_handle);

  /** Every page of a search, in order: the public directory's, or with `account` its organization's. */
  async function everyPage(q: string, limit: number, account?: ConsoleAccount): Promise<string[]> {
    const [path, key] = account ? ['/api/v1/identities/a2a/directory', 'identities'] : ['/a2a/directory', 'agents'];
    const handles: string[] = [];
    let cursor: string | null = null;
    do {
      const req = t
        .http()
        .get(path)
        .query({ q, limit, ...(cursor ? { cursor } : {}) });
      const res: { body: Record<string, unknown> & { next_cursor: string | null } } = await (
        account ? req.set(bearer(account)) : req
      ).expect(200);
      handles.push(...(res.body[key] as Agent[]).map((a) => a.agent_handle));
      cursor = res.body.next_cursor;
    } while (cursor);
    return handles;
  }

  it('ranks a name and skill match above a description mention, stems words, and pages in rank order', async () => {
    const word = marker('quokka');
    const mention = await listed(acme, { display_name: 'Helper', description: `Sometimes translates for ${word}.` });
    const skilled = await listed(acme, {
      display_name: `${word} Translator`,
      description: 'Language services.',
      skills: [{ id: 'translate', name: 'Translation', description: 'Translates documents.', tags: ['language'] }],
    });
    const tagged = await listed(other, {
      display_name: 'Docs',
      description: `For ${word}.`,
      skills: [{ id: 'docs', name: 'Documents', description: 'Handles files.', tags: ['translation'] }],
    });
    expect(await find({ q: `${word} translator` })).toEqual([skilled, tagged, mention]);
    // The organization directory ranks its own identities the same way.
    const own = await t
      .http()
      .get('/api/v1/identities/a2a/directory')
      .query({ q: `${word} translator` })
      .set(bearer(acme))
      .expect(200);
    expect(own.body.identities.map((i: Agent) => i.agent_handle)).toEqual([skilled, mention]);
    // "translations" and "translating" stem as "translator" and "translates" do.
    expect(await find({ q: `${word} translating` })).toEqual([skilled, tagged, mention]);

    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { agents: Agent[]; next_cursor: string | null } } = await t
        .http()
        .get('/a2a/directory')
        .query({ q: `${word} translation`, limit: 1, ...(cursor ? { cursor } : {}) })
        .expect(200);
      pages.push(...res.body.agents.map((a) => a.agent_handle));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(pages).toEqual([skilled, tagged, mention]);
  });

  it('finds cards holding some of the words, those holding more of them first', async () => {
    const [w1, w2, w3] = [marker('kudu'), marker('dingo'), marker('gecko')];
    const all = await listed(acme, { description: `Handles ${w1}, ${w2} and ${w3}.` });
    const two = await listed(other, { description: `Handles ${w1} and ${w2}.` });
    const one = await listed(acme, { description: `Handles ${w3}.` });
    expect(await find({ q: `${w1} ${w2} ${w3}` })).toEqual([all, two, one]);
    const some = await find({ q: `${w3} ${w2}` });
    expect(some[0]).toBe(all);
    expect([...some].sort()).toEqual([all, two, one].sort());
    const own = await t
      .http()
      .get('/api/v1/identities/a2a/directory')
      .query({ q: `${w1} ${w2} ${w3}` })
      .set(bearer(acme));
    expect(own.body.identities.map((i: Agent) => i.agent_handle)).toEqual([all, one]);
  });

  it('finds the cards sharing the skill words of the best cards found (feedback), after them', async () => {
    const [asked, shared, brand] = [letters('quoll'), letters('numbat'), letters('dunnart')];
    const found = await listed(acme, {
      display_name: `${asked} ${brand}`,
      skills: [{ id: 'x', name: 'Skill', description: `${shared}.`, tags: [] }],
    });
    const kin = await listed(other, { description: `Handles ${shared} requests.` });
    // Its name is not what it does: a card sharing only that is not found.
    await listed(acme, { description: `Handles ${brand} requests.` });
    expect(await find({ q: asked })).toEqual([found, kin]);
  });

  it('finds a misspelled name, and a sentence describing the task by any of its rarer words', async () => {
    const name = `Zephyrquill${randomBytes(2).toString('hex')}`;
    const handle = await listed(acme, {
      display_name: name,
      description: 'Writes haiku about mountain weather.',
      skills: [{ id: 'poems', name: 'Poetry', description: 'Short poems on request.', tags: ['writing'] }],
    });
    const misspelled = name.toLowerCase().replace('quill', 'qill');
    expect(await find({ q: misspelled })).toContain(handle);
    expect((await find({ q: misspelled }))[0]).toBe(handle);
    expect(await find({ q: `please could someone write me a short haiku about ${name}` })).toContain(handle);
  });

  it("counts a query's first eight words after stop words, wherever they stand in it", async () => {
    // Two words each held by more cards than DF_CAP (500): common words find the cards holding all of them.
    const [left, right] = [letters('wombat'), letters('bilby')];
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, description)
       SELECT $4 || '-' || g, $2, now(), true, true, 'About ' || CASE WHEN g % 2 = 0 THEN $1 ELSE $3 END || '.'
         FROM generate_series(1, 1100) g`,
      [left, acme.organizationId, right, marker('bulk')],
    );
    const both = await listed(other, { description: `${left} and ${right}` });
    expect(await find({ q: `${left} ${right}` })).toEqual([both]);
    // Seven stop words put the second word ninth in the text: it is still the second word, not a feedback word.
    expect(await find({ q: `${left} is the one that I want for ${right}` })).toEqual([both]);
  });

  it("reads a common word's best cards from the word index in the order scoring every match gives", async () => {
    const org = await signup(t, unique('Walker'));
    const word = letters('oryx');
    // Two words the query's prefix stands for: a card holding both ranks by its weightiest.
    const longer = `${word}zz`;
    const described = await listed(org, {
      description: `About ${word}.`,
      skills: [{ id: 'z', name: 'Zed', description: `Does ${longer}.`, tags: [] }],
    });
    const tagged = await listed(org, { skills: [{ id: 'x', name: 'Ex', description: 'Other.', tags: [longer] }] });
    const named = await listed(org, { display_name: `${word} Agent` });
    // Not listed: the organization's directory holds it, the public one does not.
    const unlisted = (await createEnabledIdentity(t, org, { display_name: `${word} Unlisted` })).handle;
    // More cards than DF_CAP hold the word, newer and only in their description (class D): it is common.
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, description, created_at)
       SELECT $1 || '-' || g, $2, now(), true, true, $3, now() + make_interval(secs => g) FROM generate_series(1, 600) g`,
      [marker('bulk'), org.organizationId, `About ${word}.`],
    );

    const listedOrder = await everyPage(word, 200);
    // Names, then skill tags, then skill descriptions, then descriptions (newest first among them).
    expect(listedOrder.slice(0, 3)).toEqual([named, tagged, described]);
    expect(listedOrder).toHaveLength(603);
    // The organization's directory is not in the word index: it scores every match, and agrees.
    const own = await everyPage(word, 200, org);
    expect(own.filter((handle) => handle !== unlisted)).toEqual(listedOrder);
    // The first page alone (the walk) is the first page of the whole order.
    expect(await find({ q: word, limit: 50 })).toEqual(listedOrder.slice(0, 50));
  });

  it('ranks the cards holding every one of several common words by where they hold each, as the organization directory does', async () => {
    const org = await signup(t, unique('Pair'));
    const [first, second] = [letters('ibex'), letters('lynx')];
    const named = await listed(org, { display_name: `${first} ${second} Agent` });
    const tagged = await listed(org, {
      display_name: `${first} Agent`,
      skills: [{ id: 'x', name: 'Ex', description: 'Other.', tags: [second] }],
    });
    const described = await listed(org, {
      description: `About ${first}.`,
      skills: [{ id: 'x', name: 'Ex', description: 'Other.', tags: [second] }],
    });
    const onlyFirst = await listed(org, { display_name: `${first} Only` });
    const unlisted = (await createEnabledIdentity(t, org, { display_name: `${first} ${second} Unlisted` })).handle;
    // More cards than DF_CAP hold both, newer and only in their description: both words are common.
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, description, created_at)
       SELECT $1 || '-' || g, $2, now(), true, true, $3, now() + make_interval(secs => g) FROM generate_series(1, 600) g`,
      [marker('bulk'), org.organizationId, `About ${first} and ${second}.`],
    );

    const q = `${first} ${second}`;
    const listedOrder = await everyPage(q, 200);
    // Every word held: a card holding one of them is not found.
    expect(listedOrder).toHaveLength(603);
    expect(listedOrder).not.toContain(onlyFirst);
    // Both in the names; one in the names, one in a tag; one in a tag, one in the description; then
    // the newer cards holding both in their descriptions only.
    expect(listedOrder.slice(0, 3)).toEqual([named, tagged, described]);
    // The organization's directory checks each word's prefix on its own rows, and agrees.
    const own = await everyPage(q, 200, org);
    expect(own.filter((handle) => handle !== unlisted)).toEqual(listedOrder);
  });

  it("ranks several words the cards hold by where they hold them, not by the order of a name's words", async () => {
    const [first, second, third] = [letters('jerboa'), letters('pangolin'), letters('axolotl')];
    const q = `${first} ${second}`;
    // Each pair holds the same words in its names, in two orders; the newer of a pair comes first
    // whichever order it has (the names' likeness, their spelling, would put the phrase first).
    // Handles of letters, one word each: a handle the parser splits otherwise (`agent-12345678`
    // is two words, `agent-1a2b3c4d` three) would make one card shorter, so ranked above.
    const card = (name: string, description: string) =>
      listed(acme, { agent_handle: letters('pair'), display_name: name, description });
    const phraseOlder = await card(`${first} ${second} ${third}`, 'Older.');
    const scatteredNewer = await card(`${second} ${third} ${first}`, 'Newer.');
    expect(await find({ q })).toEqual([scatteredNewer, phraseOlder]);
    const scatteredOlder = await card(`${second} ${third} ${first}`, 'Older.');
    const phraseNewer = await card(`${first} ${second} ${third}`, 'Newer.');
    expect((await find({ q })).slice(0, 2)).toEqual([phraseNewer, scatteredOlder]);
  });

  it('ranks the handle asked for above the handles its number begins, however new they are', async () => {
    const stem = letters('hyrax');
    const exact = await listed(acme, { agent_handle: `${stem}-agent-7`, display_name: 'Helper' });
    const longer = [];
    for (const n of [70, 71, 712]) {
      longer.push(await listed(acme, { agent_handle: `${stem}-agent-${n}`, display_name: 'Helper' }));
    }
    const found = await find({ q: `${stem}-agent-7` });
    expect(found[0]).toBe(exact);
    expect(found.slice(1, 4).sort()).toEqual(longer.sort());
    // Written with spaces, a number still names a handle.
    expect((await find({ q: `${stem} agent 7` }))[0]).toBe(exact);
    // Words joined by hyphens name one too: the handle spelled so above a newer one of the same words.
    const named = await listed(acme, { agent_handle: `${stem}-ledger`, display_name: 'Helper' });
    const plural = await listed(acme, { agent_handle: `${stem}-ledgers`, display_name: 'Helper' });
    expect((await find({ q: `${stem}-ledger` })).slice(0, 2)).toEqual([named, plural]);
  });

  it("finds a misspelt name among the names' words, its best cards read in the order scoring every match gives", async () => {
    const org = await signup(t, unique('Speller'));
    const word = letters('narwhal');
    // The query: two neighbouring letters swapped. Every card below holds a word spelled like it.
    const misspelt = swapped(word);
    // Likelier (the word itself) and less like it (the word with a tail): likeness comes first.
    const tailed = `${word}zz`;
    const exact = await listed(org, { display_name: `${word}` });
    const tail = await listed(org, { display_name: `${tailed} Agent` });
    // The word in a description only: names are what likeness reads.
    const described = await listed(org, { display_name: 'Plain', description: `About ${word}.` });
    // Not listed: the organization's directory holds it, the public one does not.
    const unlisted = (await createEnabledIdentity(t, org, { display_name: `${word} Unlisted` })).handle;
    // More cards than the QUICK_CANDIDATES (200) scored in full, newer, a third holding the tailed word.
    const bulk = marker('speller');
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, display_name, created_at)
       SELECT $1 || '-' || g, $2, now(), true, true, CASE WHEN g % 3 = 0 THEN $4 ELSE $3 END || ' Bot ' || g,
              now() + make_interval(secs => g)
         FROM generate_series(1, 400) g`,
      [bulk, org.organizationId, word, tailed],
    );
    const listedOrder = await everyPage(misspelt, 150);
    expect(listedOrder).toHaveLength(402);
    expect(listedOrder).toContain(exact);
    expect(listedOrder).not.toContain(described);
    // The cards holding the tailed word (less like the query) come after every card holding the word.
    const tailedCards = [tail, ...Array.from({ length: 133 }, (_, g) => `${bulk}-${3 * (g + 1)}`)];
    expect(new Set(listedOrder.slice(-134))).toEqual(new Set(tailedCards));
    // The organization's directory finds its cards by their own rows, not the word index: it agrees.
    const own = await everyPage(misspelt, 150, org);
    expect(own).toContain(unlisted);
    expect(own.filter((handle) => handle !== unlisted)).toEqual(listedOrder);
    // The first page alone (the walk) is the first page of the whole order.
    expect(await find({ q: misspelt, limit: 50 })).toEqual(listedOrder.slice(0, 50));
  });

  it('looks a misspelling up among the words the cards of the directory searched hold', async () => {
    const org = await signup(t, unique('Crowd'));
    const word = letters('gerbil');
    const shorter = await listed(org, { display_name: `${word.slice(0, -2)} Agent` });
    // Eight words likelier than the listed card's, in cards no one lists publicly.
    const unlisted: string[] = [];
    for (const letter of 'abcdefgh') {
      unlisted.push((await createEnabledIdentity(t, org, { display_name: `${word}${letter}` })).handle);
    }
    expect(await find({ q: swapped(word) })).toEqual([shorter]);
    // Stop words are not looked up (each is like every word starting with it).
    expect(await find({ q: `a the ${swapped(word)}` })).toEqual([shorter]);
    // The organization's directory holds them: its eight likest words are theirs.
    expect(new Set(await everyPage(swapped(word), 50, org))).toEqual(new Set(unlisted));
    // Listed, but outside a filter: a tagged card's word is looked up among the filter's cards.
    const tagged = await listed(org, {
      display_name: `${word.slice(0, -3)} Tagged`,
      skills: [{ id: 'one', name: 'One', description: 'One thing.', tags: [`${word}-tag`] }],
    });
    for (const handle of unlisted) {
      await list(org, handle);
    }
    expect(await find({ q: swapped(word), tag: `${word}-tag` })).toEqual([tagged]);
  });

  it('finds a misspelt name whose word is dotted or hyphenated, as the text search parser reads it', async () => {
    const word = letters('ocelot');
    const dotted = await listed(acme, { display_name: `${word}.io` });
    expect(await find({ q: swapped(word) })).toEqual([dotted]);
  });

  it("keeps the word index equal to the listed cards' words through every change", async () => {
    const word = letters('civet');
    const wordIndexDiffers = async () =>
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM (
             (SELECT identity_id, lexeme FROM identity_search_terms
              EXCEPT SELECT i.id, v.lexeme FROM identities i, unnest(i.search_vector) v
                      WHERE i.enabled AND i.publicly_discoverable AND i.status = 'active' AND i.claimed_at IS NOT NULL)
             UNION ALL
             (SELECT i.id, v.lexeme FROM identities i, unnest(i.search_vector) v
               WHERE i.enabled AND i.publicly_discoverable AND i.status = 'active' AND i.claimed_at IS NOT NULL
              EXCEPT SELECT identity_id, lexeme FROM identity_search_terms)) d`,
        )
      )[0].n;
    const handle = await listed(acme, { display_name: `${word} One`, description: 'First words.' });
    expect(await wordIndexDiffers()).toBe(0);
    expect(await find({ q: word })).toEqual([handle]);
    const change = async (path: string, body: Record<string, unknown>) =>
      t.http().patch(`/api/v1/identities/${handle}${path}`).set(bearer(acme)).send(body).expect(200);
    // Other words: the old ones go, the new ones come — a misspelling of the new name finds it at once.
    const renamed = letters('dugong');
    await change('', { display_name: `${renamed} Renamed`, description: `Now about ${word}s and more.` });
    expect(await wordIndexDiffers()).toBe(0);
    expect(await find({ q: 'renamed' })).toContain(handle);
    expect(await find({ q: swapped(renamed) })).toEqual([handle]);
    // The names' lexicon holds every word of every card's names.
    const [{ missing }] = await t.db.query(
      `SELECT count(*)::int AS missing FROM identities i, identity_name_words_of(i.search_names) n
        WHERE NOT EXISTS (SELECT 1 FROM identity_name_words w WHERE w.word = n.word AND w.lexeme = n.lexeme)`,
    );
    expect(missing).toBe(0);
    // Unlisted, disabled, listed again.
    await change('/settings', { publicly_discoverable: false });
    expect(await find({ q: word })).toEqual([]);
    await change('/settings', { publicly_discoverable: true });
    await change('/settings', { enabled: false });
    expect(await find({ q: word })).toEqual([]);
    await change('/settings', { enabled: true });
    expect(await find({ q: word })).toEqual([handle]);
    expect(await wordIndexDiffers()).toBe(0);
    // Deleted.
    await t.http().delete(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(204);
    expect(await find({ q: word })).toEqual([]);
    expect(
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM identity_search_terms t JOIN identities i ON i.id = t.identity_id
                          WHERE i.agent_handle = $1`,
          [handle],
        )
      )[0].n,
    ).toBe(0);
    expect(await wordIndexDiffers()).toBe(0);
    // A TRUNCATE of identities empties both (rolled back: the file's other cards stay).
    const runner = t.db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query('TRUNCATE identities CASCADE');
      const [{ terms, names }] = await runner.query(
        'SELECT (SELECT count(*) FROM identity_search_terms)::int AS terms, (SELECT count(*) FROM identity_name_words)::int AS names',
      );
      expect({ terms, names }).toEqual({ terms: 0, names: 0 });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('counts a word over every listed card, whatever the filters: a common word finds nothing by itself under a filter', async () => {
    const [common, rare] = [letters('quagga'), letters('serow')];
    await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, description)
       SELECT $1 || '-' || g, $2, now(), true, true, $3 FROM generate_series(1, 550) g`,
      [marker('bulk'), acme.organizationId, `About ${common}.`],
    );
    // The filter's media type is not a word of the cards (no feedback through it).
    const skill = (name: string) => ({ id: name, name, description: '', tags: [], inputModes: ['image/x-quagga'] });
    await listed(acme, { description: `About ${common}.`, skills: [skill(letters('sk'))] });
    const holdsRare = await listed(other, { description: `About ${rare}.`, skills: [skill(letters('sk'))] });
    // Under the filter one card holds the common word, but 551 listed cards do: only the rare word finds.
    expect(await find({ q: `${common} ${rare}`, input_mode: 'image/x-quagga' })).toEqual([holdsRare]);
  });

  it('never searches admitted skills publicly', async () => {
    const secret = marker('okapi');
    const handle = await listed(acme, {
      skills: [{ id: 'hidden', name: `Hidden ${secret}`, description: 'x', tags: [], visibility: 'admitted' }],
    });
    expect(await find({ q: secret })).toEqual([]);
    expect((await find({ q: handle }))[0]).toBe(handle);
    expect(await find({ q: `${secret} ${marker('none')}` })).toEqual([]);
  });

  it('filters by input and output mode, organization, binding and protocol generation', async () => {
    const word = marker('tapir');
    const image = await listed(acme, {
      description: word,
      skills: [{ id: 'ocr', name: 'OCR', description: 'Reads scans.', tags: [], inputModes: ['image/png'] }],
    });
    const pdf = await listed(other, {
      description: word,
      skills: [{ id: 'pdf', name: 'PDF', description: 'Writes PDFs.', tags: [], outputModes: ['application/pdf'] }],
    });
    const sorted = (xs: string[]) => [...xs].sort();
    expect(await find({ q: word, input_mode: 'image/png' })).toEqual([image]);
    expect(await find({ q: word, output_mode: 'application/pdf' })).toEqual([pdf]);
    // text/plain and JSON-RPC over 0.3 filter nothing: the search finds what it finds without them.
    const unfiltered = await find({ q: word });
    expect(unfiltered.slice(0, 2).sort()).toEqual(sorted([image, pdf]));
    expect(await find({ q: word, input_mode: 'text/plain' })).toEqual(unfiltered);
    expect(await find({ q: word, organization: otherName.toUpperCase() })).toEqual([pdf]);
    expect(await find({ q: word, organization: 'No such organization' })).toEqual([]);
    expect(await find({ q: word, binding: 'JSONRPC', protocol_version: '0.3' })).toEqual(unfiltered);
    // gRPC is off in this server: no agent is served on it.
    expect(await find({ q: word, binding: 'GRPC' })).toEqual([]);
    const org = await t
      .http()
      .get('/api/v1/identities/a2a/directory')
      .query({ q: word, input_mode: 'image/png' })
      .set(bearer(acme))
      .expect(200);
    expect(org.body.identities.map((i: Agent) => i.agent_handle)).toEqual([image]);
    for (const query of [{ input_mode: 'png' }, { binding: 'SOAP' }, { protocol_version: '2.0' }]) {
      expect((await t.http().get('/a2a/directory').query(query)).status).toBe(400);
    }
  });
});
