import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal } from '../auth/principal';
import { Public, Surface } from '../auth/surface.decorator';
import { addressSubject } from '../limits/client-address';
import { ExtraQuota } from '../limits/rate-limit.decorator';
import { ConsoleService, type SessionView } from './console.service';
import { LoginDto, SignupDto } from './dto/console-auth.dto';
import { clearSessionCookie, setSessionCookie } from './session-cookie';

@ApiTags('Console')
@Controller('api/v1/console')
export class ConsoleController {
  private readonly secureCookies: boolean;

  constructor(
    private readonly console: ConsoleService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.secureCookies = config.publicBaseUrl.startsWith('https:');
  }

  @Post('signup')
  @ExtraQuota('signup')
  @Public('Create an organization and its first Console user; returns a session')
  async signup(@Body() dto: SignupDto, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    return this.withCookie(res, await this.console.signup(dto));
  }

  @Post('login')
  @HttpCode(200)
  @ExtraQuota('login_attempts')
  @Public('Log in; returns a session token (also set as an HttpOnly cookie)')
  async login(@Body() dto: LoginDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    return this.withCookie(res, await this.console.login(dto, addressSubject(req.ip)));
  }

  @Post('logout')
  @HttpCode(204)
  @Surface('console', 'End the current session')
  async logout(@CurrentPrincipal() principal: ConsolePrincipal, @Res({ passthrough: true }) res: Response): Promise<void> {
    await this.console.logout(principal);
    clearSessionCookie(res, this.secureCookies);
  }

  @Get('me')
  @Surface('console', 'The signed-in user and organization')
  me(@CurrentPrincipal() principal: ConsolePrincipal) {
    return this.console.me(principal);
  }

  private withCookie(res: Response, session: SessionView): SessionView {
    setSessionCookie(res, session.token, new Date(session.expires_at), this.secureCookies);
    return session;
  }
}
