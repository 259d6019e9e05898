import type { AppError } from '../common/app-error';
import type { AgentKeyPrincipal, ConsolePrincipal, KeyPrincipal } from '../common/principal';

/*
 * What authentication needs from the modules that own the credentials. Auth sits
 * below Keys and Console (their controllers use its decorators), so it names these
 * ports and AppModule binds them (AuthModule.forRoot): ApiKeyVerifier to KeysService,
 * SessionVerifier to ConsoleService, AccessTokenVerifier to the OAuth module's
 * TokenVerifier.
 */

/** API keys (the Keys module). */
export abstract class ApiKeyVerifier {
  /**
   * The principal of an active key; null for an unknown, malformed or revoked one; an
   * expired one throws its own 401 (`api_key_expired`). Reads only. `arriving`: asked for
   * as the request arrives, before its body is read (the read may then go at once).
   */
  abstract verify(raw: string, arriving?: boolean): Promise<KeyPrincipal | null>;

  /** Notes that a request was authenticated with the key (its `last_used_at`). */
  abstract used(principal: KeyPrincipal): void;
}

/** Console sessions (the Console module). */
export abstract class SessionVerifier {
  /** The principal of a live session; null for an unknown or expired token. */
  abstract verifySession(token: string, viaCookie: boolean): Promise<ConsolePrincipal | null>;
}

/** Bearer access tokens, JWTs (the OAuth module; docs/api.md §17). */
export abstract class AccessTokenVerifier {
  /**
   * The principal the token acts as, as it stands now (its key re-read on every
   * request); throws the 401 it deserves (`invalid_token`, or the key's own code).
   * `arriving`: asked for as the request arrives, as for keys.
   */
  abstract verifyToken(token: string, arriving?: boolean): Promise<KeyPrincipal>;

  /**
   * The 401 a federated principal (a trusted issuer's JWT) gets now: its trust removed or
   * its token expired; null while it stands. Open calls and streams ask as they wake.
   */
  abstract lostStanding(principal: AgentKeyPrincipal): Promise<AppError | null>;
}
