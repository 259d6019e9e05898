import { createServer, type Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { AgentCard, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';

/** The usage the upstream agent reports when it completes a message starting with "bill". */
export const BILLED_USAGE = { input_tokens: 120, output_tokens: 30, cost: { amount: '0.015', currency: 'USD' } };

/** The binding the upstream's card offers (only that one): JSON-RPC at /a2a, HTTP+JSON at /rest, gRPC on its own port. */
export type UpstreamAgentBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** What the upstream agent saw: each message (with the headers of its request) and each cancel. */
export interface Received {
  messageId: string;
  /** The A2A-Version header of the call that carried it. */
  version?: string;
  text: string;
  taskId: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A real A2A agent built with `@a2a-js/sdk`'s DefaultRequestHandler, on loopback: the
 * upstream of the tests. Its executor echoes: a working status, an artifact, then
 * completion. A message starting with "ask" asks for input (input-required) and its
 * next turn completes; "slow" stays working until it is canceled; "bill" completes with
 * its usage in the final status update's metadata (BILLED_USAGE, docs/api.md §18).
 */
export async function startUpstreamAgent(
  port: number,
  options: { version?: '1.0' | '0.3'; binding?: UpstreamAgentBinding; grpcPort?: number } = {},
) {
  const version = options.version ?? '1.0';
  const binding = options.binding ?? 'JSONRPC';
  if (binding === 'GRPC' && !options.grpcPort) {
    throw new Error('a gRPC upstream needs grpcPort');
  }
  const received: Received[] = [];
  const cancels: string[] = [];
  const waiting = new Map<string, (outcome: 'cancel' | 'complete') => void>();
  const contexts = new Map<string, string>();
  let headers: Record<string, string | string[] | undefined> = {};
  const base = `http://127.0.0.1:${port}`;

  const text = (value: string) => ({ text: value });
  const agentMessage = (ctx: { taskId: string; contextId: string }, value: string) =>
    Message.fromJSON({
      messageId: `m-${Math.random().toString(36).slice(2)}`,
      role: 'ROLE_AGENT',
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      parts: [text(value)],
    });
  const status = (
    ctx: { taskId: string; contextId: string },
    state: string,
    message?: string,
    metadata?: Record<string, unknown>,
  ) =>
    AgentEvent.statusUpdate(
      TaskStatusUpdateEvent.fromJSON({
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        ...(metadata ? { metadata } : {}),
        status: {
          state,
          timestamp: new Date().toISOString(),
          ...(message ? { message: Message.toJSON(agentMessage(ctx, message)) } : {}),
        },
      }),
    );

  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const said = ctx.userMessage.parts
        .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
        .join('');
      received.push({
        messageId: ctx.userMessage.messageId,
        text: said,
        taskId: ctx.taskId,
        headers,
        version: headers['a2a-version'] as string | undefined,
      });
      contexts.set(ctx.taskId, ctx.contextId);
      bus.publish(
        AgentEvent.task(
          ctx.task ??
            Task.fromJSON({
              id: ctx.taskId,
              contextId: ctx.contextId,
              status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
              history: [Message.toJSON(ctx.userMessage)],
            }),
        ),
      );
      if (said.startsWith('ask')) {
        bus.publish(status(ctx, 'TASK_STATE_INPUT_REQUIRED', 'Which currency?'));
        bus.finished();
        return;
      }
      bus.publish(status(ctx, 'TASK_STATE_WORKING', `working on: ${said}`));
      if (said.startsWith('slow')) {
        // Still running (the handler keeps the task's event bus) until canceled or released.
        if ((await new Promise<'cancel' | 'complete'>((resolve) => waiting.set(ctx.taskId, resolve))) === 'cancel') {
          return;
        }
      }
      bus.publish(
        AgentEvent.artifactUpdate(
          TaskArtifactUpdateEvent.fromJSON({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            append: false,
            lastChunk: true,
            artifact: { artifactId: 'echo', name: 'echo.txt', parts: [text(`echo: ${said}`)] },
          }),
        ),
      );
      bus.publish(
        status(
          ctx,
          'TASK_STATE_COMPLETED',
          `done: ${said}`,
          said.startsWith('bill') ? { usage: BILLED_USAGE } : undefined,
        ),
      );
      bus.finished();
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      cancels.push(taskId);
      bus.publish(status({ taskId, contextId: contexts.get(taskId) ?? '' }, 'TASK_STATE_CANCELED'));
      bus.finished();
      waiting.get(taskId)?.('cancel');
      waiting.delete(taskId);
    },
  };

  const endpoint =
    binding === 'JSONRPC' ? `${base}/a2a` : binding === 'HTTP+JSON' ? `${base}/rest` : `127.0.0.1:${options.grpcPort}`;
  const card = {
    name: 'Echo',
    description: 'Echoes what it is told, with an artifact.',
    version: '1.0.0',
    supportedInterfaces: [{ url: endpoint, protocolBinding: binding, protocolVersion: version }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Says it back.', tags: ['echo', 'test'], examples: ['hello'] }],
  };
  // An A2A 0.3 agent publishes a 0.3 card (url, protocolVersion, preferredTransport).
  const served =
    version === '1.0'
      ? card
      : {
          name: card.name,
          description: card.description,
          version: card.version,
          url: endpoint,
          protocolVersion: '0.3.0',
          preferredTransport: binding,
          capabilities: card.capabilities,
          defaultInputModes: card.defaultInputModes,
          defaultOutputModes: card.defaultOutputModes,
          skills: card.skills,
        };
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(card), new InMemoryTaskStore(), executor);
  const app = express();
  app.get('/.well-known/agent-card.json', (_req, res) => res.json(served));
  app.use('/a2a', (req, _res, next) => {
    headers = { ...req.headers };
    next();
  });
  app.use(
    '/a2a',
    express.json(),
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: version === '0.3' },
    }),
  );
  if (binding === 'HTTP+JSON') {
    app.use('/rest', (req, _res, next) => {
      headers = { ...req.headers };
      next();
    });
    app.use(
      '/rest',
      express.json(),
      restHandler({
        requestHandler: handler,
        userBuilder: UserBuilder.noAuthentication,
        legacyCompat: { enabled: version === '0.3' },
      }),
    );
  }
  // gRPC (v1.0): its metadata stands for the headers; a2a-version as the SDK's client sends it.
  const grpcUserBuilder = async (call: { metadata?: grpc.Metadata }) => {
    const seen: Record<string, string | string[] | undefined> = {};
    for (const [name, value] of Object.entries(call.metadata?.getMap() ?? {})) {
      seen[name] = String(value);
    }
    headers = seen;
    return UserBuilder.noAuthentication();
  };
  let grpcServer: grpc.Server | null = null;
  const startGrpc = async () => {
    if (binding !== 'GRPC') {
      return;
    }
    grpcServer = new grpc.Server();
    if (version === '1.0') {
      grpcServer.addService(
        A2AService,
        grpcService({ requestHandler: handler, userBuilder: grpcUserBuilder as never }),
      );
    } else {
      grpcServer.addService(
        LegacyA2AService,
        legacyGrpcService({ requestHandler: handler, userBuilder: grpcUserBuilder as never }),
      );
    }
    await new Promise<void>((resolve, reject) =>
      grpcServer!.bindAsync(`127.0.0.1:${options.grpcPort}`, grpc.ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  };

  let server: Server | null = null;
  const sockets = new Set<import('node:net').Socket>();
  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(app);
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    }).then(startGrpc);
  /** Stops listening and drops every open connection (an upstream that went away mid-task). */
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const release of waiting.values()) {
        release('cancel');
      }
      waiting.clear();
      grpcServer?.forceShutdown();
      grpcServer = null;
      if (!server) {
        return resolve();
      }
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
      server = null;
    });
  await start();
  /** Lets a "slow" task finish: the artifact, then completion. */
  const release = (taskId: string) => {
    waiting.get(taskId)?.('complete');
    waiting.delete(taskId);
  };
  const running = () => [...waiting.keys()];
  return {
    url: `${base}/a2a`,
    endpoint,
    binding,
    cardUrl: `${base}/.well-known/agent-card.json`,
    base,
    received,
    cancels,
    start,
    stop,
    close: stop,
    release,
    running,
  };
}

export type UpstreamAgent = Awaited<ReturnType<typeof startUpstreamAgent>>;
