import type { components } from '../../client';

type Schemas = components['schemas'];

/**
 * Response shapes the Console reads (CONTRACT §1–§8, §13): the generated client's schemas
 * where the OpenAPI document describes the response, hand-written below until it does.
 */
export type Organization = Schemas['OrganizationView'];
export type User = Schemas['UserView'];
export type Me = Schemas['MeView'];
export type Member = Schemas['MemberView'];
export type Invite = Schemas['InviteView'] & { url?: string };

export interface Skill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  visibility?: 'public' | 'admitted';
}

export interface Identity {
  id: string;
  agent_handle: string;
  organization_id: string | null;
  display_name: string;
  description: string;
  skills: Skill[];
  claimed: boolean;
  claimed_at?: string | null;
  enabled: boolean;
  publicly_discoverable: boolean;
  allow_public_egress: boolean;
  filter_mode: 'whitelist' | 'blacklist';
  status: 'active' | 'deleted';
  card_url: string;
  created_at: string;
  updated_at: string;
}

export interface Settings {
  enabled: boolean;
  allow_public_egress: boolean;
  publicly_discoverable: boolean;
  filter_mode: 'whitelist' | 'blacklist';
}

export interface ApiKey {
  id: string;
  scope: 'admin' | 'agent';
  scoped_identity_id: string | null;
  organization_id: string | null;
  label: string;
  description: string;
  status: 'active' | 'revoked';
  prefix: string;
  created_at: string;
  created_by: { type: string; id: string };
  last_used_at: string | null;
  revoked_at: string | null;
  key?: string;
}

export interface ContactRule {
  id: string;
  identity: string;
  direction: 'inbound' | 'outbound' | 'both';
  action: 'allow' | 'block';
  peer: { type: 'identity' | 'organization'; handle: string | null; organization_id: string | null };
  note: string;
  created_at: string;
  updated_at: string;
}

export interface AdmissionCheck { allowed: boolean; reason: string; rules: ContactRule[] }
export interface Decision extends AdmissionCheck {
  id: string;
  requester: { handle: string; organization_id: string | null };
  worker: { handle: string; organization_id: string | null };
  created_at: string;
}

export interface Part { kind?: string; text?: string; data?: unknown; file?: unknown; url?: string }
export interface Message { messageId: string; role: 'user' | 'agent'; parts: Part[]; created_at: string }
export interface Artifact { artifactId: string; name?: string; description?: string; parts: Part[] }
export interface Participant { id: string; agent_handle: string; organization_id: string }
export interface Task {
  id: string;
  contextId: string;
  status: { state: string; message?: Message; timestamp: string };
  history?: Message[];
  artifacts?: Artifact[];
  requester: Participant;
  worker: Participant;
  created_at: string;
  updated_at: string;
}

export interface Webhook {
  id: string;
  identity: string | null;
  url: string;
  events: string[];
  description: string;
  status: 'active' | 'disabled';
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

export interface Attempt { attempt: number; succeeded: boolean; status_code: number | null; error: string | null; duration_ms: number | null; created_at: string }
export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  attempts: Attempt[];
}

