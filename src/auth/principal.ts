// The principal types moved to common/ (the request context, below auth, carries the
// principal). Import them from '../common/principal'; this re-export goes once issue 12's
// parallel branches have merged (see docs/architecture.md, "Layers").
export type {
  AdminKeyPrincipal,
  AgentKeyPrincipal,
  ConsolePrincipal,
  CredentialKind,
  KeyPrincipal,
  Principal,
} from '../common/principal';
