import { PASSWORD, unique } from './fixtures';
import type { HttpCall } from './http-client';

/** An identity reached over plain HTTP, with its own agent key. */
export interface HttpAgent {
  handle: string;
  key: string;
}

/** An organization's requester and worker, and its Console session for the organization's other routes. */
export interface HttpAgentPair {
  /** The Console session's bearer token. */
  token: string;
  requester: HttpAgent;
  worker: HttpAgent;
}

/**
 * Two agents that can call `POST /a2a/{handle}`, set up over plain HTTP for a server
 * in another process (agentPair in a2a.ts is the same for an in-process app): a
 * Console signup, then two identities of its organization — claimed, each with its
 * own agent key, enabled as a receiver. `roles` begin their handles. Throws, naming
 * the step, on any answer but success.
 */
export async function agentPairOverHttp(
  call: HttpCall,
  organizationName: string,
  roles: [requester: string, worker: string] = ['requester', 'worker'],
): Promise<HttpAgentPair> {
  const session = await succeeded(
    'signup',
    201,
    call('/api/v1/console/signup', {
      method: 'POST',
      body: { organization_name: organizationName, email: `${unique('user')}@example.test`, password: PASSWORD },
    }),
  );
  const token = session.token as string;
  const agent = async (role: string): Promise<HttpAgent> => {
    const created = await succeeded(
      `creating the ${role}`,
      201,
      call('/api/v1/identities', { method: 'POST', token, body: { agent_handle: unique(role), mint_key: true } }),
    );
    const handle = created.agent_handle as string;
    await succeeded(
      `enabling the ${role}`,
      200,
      call(`/api/v1/identities/${handle}/settings`, { method: 'PATCH', token, body: { enabled: true } }),
    );
    return { handle, key: created.api_key.key as string };
  };
  const requester = await agent(roles[0]);
  return { token, requester, worker: await agent(roles[1]) };
}

async function succeeded(step: string, status: number, answer: ReturnType<HttpCall>): Promise<any> {
  const { status: got, body } = await answer;
  if (got !== status) {
    throw new Error(`${step}: HTTP ${got}, expected ${status}: ${JSON.stringify(body)}`);
  }
  return body;
}
