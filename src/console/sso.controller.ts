import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { AppError } from '../common/app-error';
import { readCookie, setSessionCookie } from '../common/session-cookie';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ExtraQuota } from '../limits/rate-limit.decorator';
import { SsoStartQuery } from './dto/sso.dto';
import { SSO_LOGIN_TTL_MS, SsoService } from './sso.service';
import { SsoConfigSchema, type SsoConfigView } from './sso.view';

/** The cookie that binds a sign-in under way to the browser; sent back only to these routes. */
const SSO_COOKIE = 'a2a_sso';
const SSO_COOKIE_PATH = '/api/v1/console/sso';
const LOCATION = { Location: { description: 'Where the browser goes next.', schema: { type: 'string' } } };

/**
 * Single sign-on to the Console (docs/api.md §13): browser navigations, not API calls.
 * The start redirects to the provider; the callback redirects into the Console with
 * the session cookie, or to the sign-in page with `sso_error=<code>`.
 */
@ApiTags('Console')
@Controller('api/v1/console/sso')
export class SsoController {
  private readonly secureCookies: boolean;

  constructor(
    private readonly sso: SsoService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.secureCookies = config.publicBaseUrl.startsWith('https:');
  }

  @Get('config')
  @Public({ id: 'getSsoConfig', summary: 'Whether the Console offers single sign-on, and with which provider' })
  @Returns(200, SsoConfigSchema)
  settings(): SsoConfigView {
    return this.sso.settings();
  }

  @Get()
  @ExtraQuota('login_attempts')
  @Public({
    id: 'startSso',
    summary: 'Sign in with the single sign-on provider: redirects the browser to it',
    notes:
      'A browser navigation: answers 302 to the provider with a sign-in cookie (HttpOnly, SameSite=Lax, 10 minutes). A provider that cannot be reached sends the browser to `/console/signin?sso_error=sso_sign_in_failed`.',
  })
  @ApiResponse({ status: 302, description: "To the provider's authorization endpoint.", headers: LOCATION })
  @Refuses({ 404: '`sso_not_configured`: single sign-on is not configured on this service.' })
  async start(@Query() query: SsoStartQuery, @Res() res: Response): Promise<void> {
    await this.redirecting(res, async () => {
      const { location, browser } = await this.sso.start(query.next);
      res.cookie(SSO_COOKIE, browser, {
        httpOnly: true,
        // Lax: the provider sends the browser back with a cross-site navigation.
        sameSite: 'lax',
        secure: this.secureCookies,
        path: SSO_COOKIE_PATH,
        maxAge: SSO_LOGIN_TTL_MS,
      });
      return location;
    });
  }

  /** The provider's redirect target: its parameters are the provider's (RFC 6749 §4.1.2, RFC 9207), not a DTO. */
  @Get('callback')
  @ExtraQuota('login_attempts')
  @Public({
    id: 'ssoCallback',
    summary: "The single sign-on provider's return: opens a session and redirects into the Console",
    notes:
      'A browser navigation, from the provider (`code`, `state`, or `error`). Answers 302 to the Console with the session cookie, or to `/console/signin?sso_error=<code>`: `sso_state_invalid`, `sso_sign_in_failed`, `sso_email_unverified`, `sso_no_account`, `email_taken`, `member_limit`.',
  })
  @ApiResponse({
    status: 302,
    description: 'Into the Console, or to its sign-in page with `sso_error`.',
    headers: LOCATION,
  })
  @Refuses({ 404: '`sso_not_configured`: single sign-on is not configured on this service.' })
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.clearCookie(SSO_COOKIE, { httpOnly: true, sameSite: 'lax', secure: this.secureCookies, path: SSO_COOKIE_PATH });
    await this.redirecting(res, async () => {
      const { session, next } = await this.sso.callback(
        readCookie(req.headers.cookie, SSO_COOKIE),
        req.query as Record<string, unknown>,
      );
      setSessionCookie(res, session.token, new Date(session.expires_at), this.secureCookies);
      return next;
    });
  }

  /**
   * Sends the browser where `work` says (302), or, when the sign-in is refused, to the
   * Console's sign-in page naming the error's code. Not configured stays a 404.
   */
  private async redirecting(res: Response, work: () => Promise<string>): Promise<void> {
    let location: string;
    try {
      location = await work();
    } catch (error) {
      if (!(error instanceof AppError) || error.code === 'sso_not_configured') {
        throw error;
      }
      location = `/console/signin?sso_error=${error.code}`;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, location);
  }
}
