import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal } from '../common/principal';
import { Public, Surface } from '../auth/surface.decorator';
import { addressSubject } from '../limits/client-address';
import { Refuses, Returns } from '../common/api-docs';
import { ExtraQuota } from '../limits/rate-limit.decorator';
import { ConsoleService } from './console.service';
import { InvitationView, MeView, SessionView } from './console.view';
import { LoginDto, SignupDto } from './dto/console-auth.dto';
import { AcceptInviteDto, ChangePasswordDto, InviteCodeDto } from './dto/teams.dto';
import { clearSessionCookie, setSessionCookie } from '../common/session-cookie';
import { TeamsService } from './teams.service';

@ApiTags('Console')
@Controller('api/v1/console')
export class ConsoleController {
  private readonly secureCookies: boolean;

  constructor(
    private readonly console: ConsoleService,
    private readonly teams: TeamsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.secureCookies = config.publicBaseUrl.startsWith('https:');
  }

  @Post('signup')
  @ExtraQuota('signup')
  @Public({ id: 'signup', summary: 'Create an organization and its first Console user; returns a session' })
  @Returns(201, SessionView)
  @Refuses({
    403: '`signup_closed`: signup is closed on this service.',
    409: '`email_taken`: a Console user with that email exists.',
  })
  async signup(@Body() dto: SignupDto, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    return this.withCookie(res, await this.console.signup(dto));
  }

  @Post('login')
  @HttpCode(200)
  @ExtraQuota('login_attempts')
  @Public({ id: 'login', summary: 'Sign in; returns a session token (also set as an HttpOnly cookie)' })
  @Returns(200, SessionView)
  @Refuses({ 401: '`invalid_credentials`: the email or password is incorrect.' })
  async login(
    @Body() dto: LoginDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SessionView> {
    return this.withCookie(res, await this.console.login(dto, addressSubject(req.ip)));
  }

  @Post('invites/lookup')
  @HttpCode(200)
  @Public({
    id: 'lookupInvite',
    summary:
      'What an invitation link opens: the email invited and the inviting organization (the code stays in the body)',
  })
  @Returns(200, InvitationView)
  @Refuses({ 404: '`invite_code_invalid`: the code is unknown, already used, withdrawn or expired.' })
  async lookup(@Body() dto: InviteCodeDto): Promise<InvitationView> {
    return this.teams.invitation(dto.code);
  }

  @Post('invites/accept')
  @ExtraQuota('signup')
  @Public({
    id: 'acceptInvite',
    summary: 'Accept an invitation: become a member of the inviting organization; returns a session',
  })
  @Returns(201, SessionView)
  @Refuses({
    404: '`invite_code_invalid`: the code is unknown, already used, withdrawn or expired.',
    409: '`email_taken`: the invited email became a Console user meanwhile; `member_limit`: the organization is full.',
  })
  async accept(@Body() dto: AcceptInviteDto, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    return this.withCookie(res, await this.teams.accept(dto.code, dto.password));
  }

  @Post('logout')
  @HttpCode(204)
  @Surface('console', { id: 'logout', summary: 'Sign out: end the current session' })
  @Returns(204)
  async logout(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.console.logout(principal);
    clearSessionCookie(res, this.secureCookies);
  }

  @Get('me')
  @Surface('console', { id: 'getMe', summary: 'The signed-in user and their organization' })
  @Returns(200, MeView)
  me(@CurrentPrincipal() principal: ConsolePrincipal): Promise<MeView> {
    return this.console.me(principal);
  }

  @Post('password')
  @HttpCode(204)
  @Surface('console', { id: 'changePassword', summary: 'Change your password; your other sessions end' })
  @Returns(204)
  @Refuses({
    400: '`wrong_password`: the current password is incorrect (`errors[]` names `current_password`); or a field is invalid.',
  })
  changePassword(@CurrentPrincipal() principal: ConsolePrincipal, @Body() dto: ChangePasswordDto): Promise<void> {
    return this.console.changePassword(principal, dto);
  }

  private withCookie(res: Response, session: SessionView): SessionView {
    setSessionCookie(res, session.token, new Date(session.expires_at), this.secureCookies);
    return session;
  }
}
