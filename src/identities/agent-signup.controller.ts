import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/surface.decorator';
import { ExtraQuota } from '../limits/rate-limit.decorator';
import { AgentSignupService } from './agent-signup.service';
import { AgentSignupDto } from './dto/agent-signup.dto';
import { Refuses, Returns } from '../common/api-docs';
import { AgentSignupSchema } from './identity.view';

@ApiTags('Identities')
@Controller('api/v1/agent-signup')
export class AgentSignupController {
  constructor(private readonly signups: AgentSignupService) {}

  @Post()
  @ExtraQuota('signup')
  @Public({
    id: 'agentSignup',
    summary: 'Sign an agent up: an unclaimed identity, its agent key and a claim code',
    notes: 'The key and the claim code are shown only in this response.',
  })
  @Returns(201, AgentSignupSchema)
  @Refuses({ 409: '`handle_taken`: handles are never reused, even after deletion.' })
  signup(@Body() dto: AgentSignupDto) {
    return this.signups.signup(dto);
  }
}
