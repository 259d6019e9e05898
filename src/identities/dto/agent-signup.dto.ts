import { IsAgentHandle } from './agent-handle';
import { CardFieldsDto } from './card-fields.dto';

/** `POST /api/v1/agent-signup`: an unclaimed identity with its card copy. */
export class AgentSignupDto extends CardFieldsDto {
  @IsAgentHandle()
  agent_handle: string;
}
