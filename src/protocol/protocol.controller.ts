import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiExtraModels, ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AgentKeyPrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { ProtocolService } from './protocol.service';
import { JsonRpcRequestSchema, JsonRpcResponseSchema } from './json-rpc.schema';

@ApiTags('Protocol')
@ApiExtraModels(JsonRpcResponseSchema)
@Controller('a2a')
export class ProtocolController {
  constructor(private readonly protocol: ProtocolService) {}

  @Post(':handle')
  @HttpCode(200)
  @ApiHeader({
    name: 'A2A-Version',
    required: false,
    description: '1.0 for A2A v1.0 method names; 0.3 or absent for v0.3.',
  })
  @Surface('protocol', {
    id: 'callAgent',
    summary:
      'Call the agent {handle} over A2A JSON-RPC: send, stream, get, list, cancel, subscribe, push notification configs',
    notes:
      'Errors answer as JSON-RPC error objects (HTTP 200 for A2A errors; 401, 403, 413 and 429 keep their HTTP status). ' +
      'Streaming methods answer `text/event-stream`, one JSON-RPC response per event.',
  })
  @ApiBody({ type: JsonRpcRequestSchema })
  @ApiExtension('x-error-schema', '#/components/schemas/JsonRpcResponse')
  @ApiResponse({
    status: 200,
    description: 'A JSON-RPC response; for streaming methods, a stream of them.',
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/JsonRpcResponse' } },
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-sent events: each `data:` line is a JSON-RPC response.' },
      },
    },
  })
  call(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.protocol.call(principal, handle, req, res);
  }
}
