import type { components } from '../../client';

type Schemas = components['schemas'];

/** Response shapes the Console reads: the generated client's schemas (client/schema.ts). */
export type Organization = Schemas['Organization'];
export type User = Schemas['User'];
export type Me = Schemas['Me'];
export type Member = Schemas['Member'];
export type Invite = Schemas['Invite'];
export type Invitation = Schemas['Invitation'];
export type CreatedInvite = Schemas['CreatedInvite'];
export type Session = Schemas['Session'];
export type SsoConfig = Schemas['SsoConfig'];
export type OrganizationSettings = Schemas['OrganizationSettings'];

export type Identity = Schemas['Identity'];
export type CreatedIdentity = Schemas['CreatedIdentity'];
export type Settings = Schemas['IdentitySettings'];
export type Skill = Schemas['AgentSkillDto'];

export type ApiKey = Schemas['ApiKey'];
export type MintedApiKey = Schemas['MintedApiKey'];

export type TrustedIssuer = Schemas['TrustedIssuer'];

export type ContactRule = Schemas['ContactRule'];
export type AdmissionCheck = Schemas['AdmissionCheckResult'];
export type Decision = Schemas['AdmissionDecision'];

export type Part = Schemas['Part'];
export type Message = Schemas['Message'];
export type Artifact = Schemas['Artifact'];
export type Participant = Schemas['Participant'];
export type Task = Schemas['Task'];

export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type Delivery = Schemas['Delivery'];
export type Attempt = Schemas['DeliveryAttempt'];

export type AuditEvent = Schemas['AuditEvent'];

export type Approval = Schemas['Approval'];

export type TaskTree = Schemas['TaskTree'];
export type TreeNode = Schemas['TreeNode'];
export type Usage = Schemas['Usage'];
export type TopTrees = Schemas['TopTrees'];
