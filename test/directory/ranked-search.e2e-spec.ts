import { randomBytes } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { bearer, createEnabledIdentity, signup, unique, type ConsoleAccount } from '../support/fixtures';

/** A word no other identity of the file uses. */
const marker = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

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

  async function listed(account: ConsoleAccount, body: Record<string, unknown>) {
    const identity = await createEnabledIdentity(t, account, body);
    await t
      .http()
      .patch(`/api/v1/identities/${identity.handle}/settings`)
      .set(bearer(account))
      .send({ publicly_discoverable: true })
      .expect(200);
    return identity.handle;
  }

  const find = async (query: Record<string, string | number>) =>
    ((await t.http().get('/a2a/directory').query(query).expect(200)).body.agents as Agent[]).map((a) => a.agent_handle);

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

  it('never searches admitted skills publicly', async () => {
    const secret = marker('okapi');
    const handle = await listed(acme, {
      skills: [{ id: 'hidden', name: `Hidden ${secret}`, description: 'x', tags: [], visibility: 'admitted' }],
    });
    expect(await find({ q: secret })).toEqual([]);
    expect(await find({ q: handle })).toEqual([handle]);
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
    expect(await find({ q: word, input_mode: 'text/plain' }).then(sorted)).toEqual(sorted([image, pdf]));
    expect(await find({ q: word, organization: otherName.toUpperCase() })).toEqual([pdf]);
    expect(await find({ q: word, organization: 'No such organization' })).toEqual([]);
    expect(await find({ q: word, binding: 'JSONRPC', protocol_version: '0.3' }).then(sorted)).toEqual(
      sorted([image, pdf]),
    );
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
