import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/surface.decorator';
import { ExtraQuota } from '../limits/rate-limit.decorator';
import { AgentSignupService } from './agent-signup.service';
import { AgentSignupDto } from './dto/agent-signup.dto';

@ApiTags('Identities')
@Controller('api/v1/agent-signup')
export class AgentSignupController {
  constructor(private readonly signups: AgentSignupService) {}

  @Post()
  @ExtraQuota('signup')
  @Public('Agent signup: an unclaimed identity, its agent key and a one-time claim code (each shown only here)')
  signup(@Body() dto: AgentSignupDto) {
    return this.signups.signup(dto);
  }
}
