import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AgentKeyPrincipal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ProtocolService } from './protocol.service';

@ApiTags('Protocol')
@Controller('a2a')
export class ProtocolController {
  constructor(private readonly protocol: ProtocolService) {}

  @Post(':handle')
  @HttpCode(200)
  @ApiHeader({ name: 'A2A-Version', required: false, description: '1.0 for A2A v1.0 method names; 0.3 or absent for v0.3.' })
  @Surface('protocol', 'A2A JSON-RPC to the worker {handle}: send, stream, get, list, cancel, subscribe, push notification configs')
  call(@CurrentPrincipal() principal: AgentKeyPrincipal, @Param('handle') handle: string, @Req() req: Request, @Res() res: Response) {
    return this.protocol.call(principal, handle, req, res);
  }
}
