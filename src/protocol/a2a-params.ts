import { isObject } from '../common/json-object';
import type { FieldError } from '../common/app-error';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import { parsePart } from '../ledger/parts';

/**
 * The JSON params of each A2A method, type-checked before the SDK reads them
 * (docs/api.md §5: a wrong type anywhere or a missing required member is -32602 naming
 * the member). Without this, the SDK's v0.3 translators throw TypeErrors on shapes
 * they do not expect (`file: null`, `referenceTaskIds: 5`, a missing
 * `pushNotificationConfig`) and its v1.0 `fromJSON` coerces silently (`id: 5` becomes
 * `"5"`, `referenceTaskIds: 5` becomes `[]`, `text: 5` becomes `"5"`). Parts are
 * checked by the ledger's own `parsePart`, as strictly as the REST reply checks them.
 *
 * Members not listed are left alone (the SDK ignores them); `null` counts as absent, as
 * the A2A v1.0 JSON mapping reads it. v1.0 members may also be spelled in snake_case,
 * as the SDK's `fromJSON` accepts.
 *
 * Exported by request shape as well as by JSON-RPC method, so that every JSON binding
 * over the same request handler (HTTP+JSON) can run the same checks.
 */
type Check = (value: unknown, path: string, errors: FieldError[]) => void;

interface Member {
  check: Check;
  required?: boolean;
}

const fail = (errors: FieldError[], field: string, message: string) =>
  errors.push({ field, message: `${field} ${message}` });

const string: Check = (value, path, errors) =>
  void (typeof value !== 'string' && fail(errors, path, 'must be a string'));
const boolean: Check = (value, path, errors) =>
  void (typeof value !== 'boolean' && fail(errors, path, 'must be a boolean'));
const integer: Check = (value, path, errors) =>
  void (!Number.isInteger(value) && fail(errors, path, 'must be an integer'));
const object: Check = (value, path, errors) => void (!isObject(value) && fail(errors, path, 'must be an object'));
const oneOf =
  (...values: Array<string | number>): Check =>
  (value, path, errors) =>
    void (!values.includes(value as string | number) && fail(errors, path, `must be one of ${values.join(', ')}`));
const stringOrInteger: Check = (value, path, errors) =>
  void (typeof value !== 'string' && !Number.isInteger(value) && fail(errors, path, 'must be a string or an integer'));

function arrayOf(item: Check): Check {
  return (value, path, errors) => {
    if (!Array.isArray(value)) {
      return fail(errors, path, 'must be an array');
    }
    value.forEach((element, i) => item(element, `${path}[${i}]`, errors));
  };
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function shape(members: Record<string, Member | Check>, options: { snakeCase?: boolean } = {}): Check {
  return (value, path, errors) => {
    if (!isObject(value)) {
      return fail(errors, path, 'must be an object');
    }
    for (const [name, spec] of Object.entries(members)) {
      const { check, required } = typeof spec === 'function' ? { check: spec, required: false } : spec;
      const alias = options.snakeCase ? snakeCase(name) : name;
      const key = value[name] == null && alias !== name && value[alias] != null ? alias : name;
      const member = value[key];
      if (member == null) {
        if (required) {
          fail(errors, `${path}.${name}`, 'is required');
        }
        continue;
      }
      check(member, `${path}.${key}`, errors);
    }
  };
}

const required = (check: Check): Member => ({ check, required: true });

/** A part in the generation's form (v0.3 has `kind`, v1.0 does not), its contents checked by the ledger. */
const part =
  (version: A2AVersion): Check =>
  (value, path, errors) => {
    if (isObject(value) && version === '0.3' && value.kind === undefined) {
      return fail(errors, path, 'must have a kind (text, file or data)');
    }
    if (isObject(value) && version === '1.0' && value.kind !== undefined) {
      return fail(errors, path, 'is a v0.3 part (kind); send text, raw, url or data');
    }
    parsePart(value, path, errors);
  };

const strings = arrayOf(string);

// A2A v0.3 (the JSON schema of the v0.3 specification).
const v03Message = shape({
  kind: oneOf('message'),
  messageId: required(string),
  role: required(oneOf('user', 'agent')),
  parts: required(arrayOf(part('0.3'))),
  contextId: string,
  taskId: string,
  metadata: object,
  extensions: strings,
  referenceTaskIds: strings,
});
const v03PushConfig = shape({
  url: required(string),
  id: string,
  token: string,
  authentication: shape({ schemes: required(strings), credentials: string }),
});
const v03SendParams = shape({
  message: required(v03Message),
  configuration: shape({
    acceptedOutputModes: strings,
    historyLength: integer,
    pushNotificationConfig: v03PushConfig,
    blocking: boolean,
  }),
  metadata: object,
});
const v03TaskId = shape({ id: required(string), metadata: object });

export const V03_PARAMS: Record<string, Check> = {
  'message/send': v03SendParams,
  'message/stream': v03SendParams,
  'tasks/get': shape({ id: required(string), historyLength: integer, metadata: object }),
  'tasks/cancel': v03TaskId,
  'tasks/resubscribe': v03TaskId,
  'tasks/pushNotificationConfig/set': shape({
    taskId: required(string),
    pushNotificationConfig: required(v03PushConfig),
  }),
  'tasks/pushNotificationConfig/get': shape({
    id: required(string),
    pushNotificationConfigId: string,
    metadata: object,
  }),
  'tasks/pushNotificationConfig/list': v03TaskId,
  'tasks/pushNotificationConfig/delete': shape({
    id: required(string),
    pushNotificationConfigId: required(string),
    metadata: object,
  }),
};

// A2A v1.0 (the JSON mapping of the v1.0 proto).
const v1 = (members: Record<string, Member | Check>) => shape({ tenant: string, ...members }, { snakeCase: true });
const v1Message = shape(
  {
    messageId: required(string),
    contextId: string,
    taskId: string,
    role: required(oneOf('ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED', 0, 1, 2)),
    parts: required(arrayOf(part('1.0'))),
    metadata: object,
    extensions: strings,
    referenceTaskIds: strings,
  },
  { snakeCase: true },
);
const v1PushConfig = (taskId: Member | Check) =>
  v1({
    id: string,
    taskId,
    url: required(string),
    token: string,
    authentication: shape({ scheme: required(string), credentials: string }),
  });
const v1SendMessageRequest = v1({
  message: required(v1Message),
  configuration: shape(
    {
      acceptedOutputModes: strings,
      taskPushNotificationConfig: v1PushConfig(string),
      historyLength: integer,
      returnImmediately: boolean,
    },
    { snakeCase: true },
  ),
  metadata: object,
});

/** By v1.0 request message, for the bindings whose routes name the request rather than a method. */
export const V1_REQUESTS = {
  SendMessageRequest: v1SendMessageRequest,
  GetTaskRequest: v1({ id: required(string), historyLength: integer }),
  ListTasksRequest: v1({
    contextId: string,
    status: stringOrInteger,
    pageSize: integer,
    pageToken: string,
    historyLength: integer,
    statusTimestampAfter: string,
    includeArtifacts: boolean,
  }),
  CancelTaskRequest: v1({ id: required(string), metadata: object }),
  SubscribeToTaskRequest: v1({ id: required(string) }),
  TaskPushNotificationConfig: v1PushConfig(required(string)),
  GetTaskPushNotificationConfigRequest: v1({ taskId: required(string), id: string }),
  ListTaskPushNotificationConfigsRequest: v1({ taskId: required(string), pageSize: integer, pageToken: string }),
  DeleteTaskPushNotificationConfigRequest: v1({ taskId: required(string), id: required(string) }),
} satisfies Record<string, Check>;

export const V1_PARAMS: Record<string, Check> = {
  SendMessage: V1_REQUESTS.SendMessageRequest,
  SendStreamingMessage: V1_REQUESTS.SendMessageRequest,
  GetTask: V1_REQUESTS.GetTaskRequest,
  ListTasks: V1_REQUESTS.ListTasksRequest,
  CancelTask: V1_REQUESTS.CancelTaskRequest,
  SubscribeToTask: V1_REQUESTS.SubscribeToTaskRequest,
  CreateTaskPushNotificationConfig: V1_REQUESTS.TaskPushNotificationConfig,
  GetTaskPushNotificationConfig: V1_REQUESTS.GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigs: V1_REQUESTS.ListTaskPushNotificationConfigsRequest,
  DeleteTaskPushNotificationConfig: V1_REQUESTS.DeleteTaskPushNotificationConfigRequest,
};

/**
 * What is wrong with a method's params (each problem names its member, `params.…`),
 * or an empty list: also for a method that takes none to check (the extended card's).
 */
export function paramsErrors(version: A2AVersion, method: string, params: unknown): FieldError[] {
  const table = version === '1.0' ? V1_PARAMS : V03_PARAMS;
  return Object.hasOwn(table, method) ? requestErrors(table[method], params, 'params') : [];
}

/** The extended card's method in each generation: it takes no params to check. */
const EXTENDED_CARD_METHOD: Record<A2AVersion, string> = {
  '1.0': 'GetExtendedAgentCard',
  '0.3': 'agent/getAuthenticatedExtendedCard',
};

/** Whether `method` is one the generation's SDK transport serves (else JSON-RPC -32601). */
export function isA2AMethod(version: A2AVersion, method: string): boolean {
  const table = version === '1.0' ? V1_PARAMS : V03_PARAMS;
  return Object.hasOwn(table, method) || method === EXTENDED_CARD_METHOD[version];
}

/** The errors of one request shape, rooted at `path` (e.g. `body` for an HTTP+JSON binding). */
export function requestErrors(check: Check, value: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  check(value, path, errors);
  return errors;
}

/**
 * The v0.3 HTTP+JSON binding's bodies: the JSON mapping of the v0.3 proto
 * (`a2a.v1`), which the SDK's v0.3 REST router decodes with `fromJSON` (coercing
 * `5` to `"5"`, dropping a part it cannot read). Parts are `{text}`, `{file:
 * {fileWithUri | fileWithBytes, mimeType}}` or `{data: {data}}`; the ledger checks
 * what the SDK then makes of them.
 */
const v03RestPart: Check = (value, path, errors) => {
  if (!isObject(value)) {
    return fail(errors, path, 'must be an object');
  }
  const contents = ['text', 'file', 'data'].filter((name) => value[name] != null);
  if (contents.length !== 1) {
    return fail(errors, path, 'must have exactly one of text, file or data');
  }
  shape({
    text: string,
    file: shape({ fileWithUri: string, fileWithBytes: string, mimeType: string }, { snakeCase: true }),
    data: shape({ data: object }),
    metadata: object,
  })(value, path, errors);
};
const v03RestPushConfig = shape({
  url: required(string),
  id: string,
  token: string,
  authentication: shape({ schemes: strings, credentials: string }),
});
const v03RestMessage = shape(
  {
    messageId: required(string),
    contextId: string,
    taskId: string,
    role: oneOf('ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED', 0, 1, 2),
    content: required(arrayOf(v03RestPart)),
    metadata: object,
    extensions: strings,
  },
  { snakeCase: true },
);

/** By v0.3 HTTP+JSON request body. */
export const V03_REST_REQUESTS = {
  SendMessageRequest: (value: unknown, path: string, errors: FieldError[]): void => {
    // The v0.3 proto names the message `request` (JSON `message`); the SDK takes either.
    const message = isObject(value) && value.message == null && value.request != null ? 'request' : 'message';
    shape({
      [message]: required(v03RestMessage),
      configuration: shape(
        {
          acceptedOutputModes: strings,
          pushNotification: v03RestPushConfig,
          historyLength: integer,
          blocking: boolean,
        },
        { snakeCase: true },
      ),
      metadata: object,
    })(value, path, errors);
  },
  TaskPushNotificationConfig: shape(
    { name: string, pushNotificationConfig: required(v03RestPushConfig) },
    { snakeCase: true },
  ),
} satisfies Record<string, Check>;
