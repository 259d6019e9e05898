import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** The methods of both A2A generations on `POST /a2a/{handle}`; the `A2A-Version` header picks the generation. */
export const A2A_METHODS = {
  '0.3': [
    'message/send',
    'message/stream',
    'tasks/get',
    'tasks/list',
    'tasks/cancel',
    'tasks/resubscribe',
    'tasks/pushNotificationConfig/set',
    'tasks/pushNotificationConfig/get',
    'tasks/pushNotificationConfig/list',
    'tasks/pushNotificationConfig/delete',
    'agent/getAuthenticatedExtendedCard',
  ],
  '1.0': [
    'SendMessage',
    'SendStreamingMessage',
    'GetTask',
    'ListTasks',
    'CancelTask',
    'SubscribeToTask',
    'CreateTaskPushNotificationConfig',
    'GetTaskPushNotificationConfig',
    'ListTaskPushNotificationConfigs',
    'DeleteTaskPushNotificationConfig',
    'GetExtendedAgentCard',
  ],
} as const;

/** A JSON-RPC 2.0 request (one object, no batches). `params` follows the A2A spec of the chosen version. */
@ApiSchema({ name: 'JsonRpcRequest' })
export class JsonRpcRequestSchema {
  @ApiProperty({ enum: ['2.0'] }) jsonrpc: '2.0';
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'integer' }], description: 'Echoed in the response.' }) id:
    string | number;
  @ApiProperty({
    enum: [...A2A_METHODS['0.3'], ...A2A_METHODS['1.0']],
    description:
      'v0.3 names (`message/send`, …) without the `A2A-Version` header or with `0.3`; v1.0 names (`SendMessage`, …) with `A2A-Version: 1.0`.',
  })
  method: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "The method's parameters, as the A2A spec of that version defines them.",
  })
  params?: Record<string, unknown>;
}

@ApiSchema({ name: 'JsonRpcError' })
class JsonRpcErrorSchema {
  @ApiProperty({ example: -32001, description: 'JSON-RPC / A2A error code.' }) code: number;
  @ApiProperty() message: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Carries `reason`, a stable code, and the `request_id`.',
  })
  data?: Record<string, unknown>;
}

/** A JSON-RPC 2.0 response: `result` on success, `error` on failure (errors too answer in this shape). */
@ApiSchema({ name: 'JsonRpcResponse' })
export class JsonRpcResponseSchema {
  @ApiProperty({ enum: ['2.0'] }) jsonrpc: '2.0';
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true }) id: string | number | null;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "The method's result (a Task, a Message, a list, …).",
  })
  result?: Record<string, unknown>;
  @ApiPropertyOptional({ type: JsonRpcErrorSchema }) error?: JsonRpcErrorSchema;
}
