import { Foundation1763700000000 } from './1763700000000-foundation';
import { IdentitiesDirectory1763700100000 } from './1763700100000-identities-directory';
import { Admission1763700200000 } from './1763700200000-admission';
import { Ledger1763700300000 } from './1763700300000-ledger';
import { Events1763700400000 } from './1763700400000-events';
import { ArtifactBytes1763700500000 } from './1763700500000-artifact-bytes';
import { ConsoleTeams1763700600000 } from './1763700600000-console-teams';
import { Conformance1763700700000 } from './1763700700000-conformance';
import { EventStream1763700900000 } from './1763700900000-event-stream';
import { AuditEvents1795553649366 } from './1795553649366-audit-events';
import { TaskEventTrace1795553876351 } from './1795553876351-task-event-trace';
import { StandingChanges1795600000000 } from './1795600000000-standing-changes';
import { AdmissionVersion1795700000000 } from './1795700000000-admission-version';
import { TaskAtSeq1795800000000 } from './1795800000000-task-at-seq';
import { ConsoleEmailKey1796439327973 } from './1796439327973-console-email-key';
import { AskAndApproval1796451758038 } from './1796451758038-ask-and-approval';
import { KeyLifetimes1796452176771 } from './1796452176771-key-lifetimes';
import { Approvals1796452298737 } from './1796452298737-approvals';
import { PerSkillPolicy1796452504827 } from './1796452504827-per-skill-policy';
import { TrustedIssuers1796453000000 } from './1796453000000-trusted-issuers';
import { ConsoleSso1796460000000 } from './1796460000000-console-sso';
import { DelegationUsageBudgets1796470000000 } from './1796470000000-delegation-usage-budgets';
import { RankedSearch1796500000000 } from './1796500000000-ranked-search';
import { AiCatalog1796500100000 } from './1796500100000-ai-catalog';
import { UpstreamCardTrust1796500200000 } from './1796500200000-upstream-card-trust';
import { Availability1796500300000 } from './1796500300000-availability';
import { DeliveryResponses1796510000000 } from './1796510000000-delivery-responses';
import { TrustedIssuerKeys1796513900000 } from './1796513900000-trusted-issuer-keys';
import { IdentitySearchTerms1796520000000 } from './1796520000000-identity-search-terms';
import { IdentityNameWords1796530000000 } from './1796530000000-identity-name-words';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [
  Foundation1763700000000,
  IdentitiesDirectory1763700100000,
  Admission1763700200000,
  Ledger1763700300000,
  Events1763700400000,
  ArtifactBytes1763700500000,
  ConsoleTeams1763700600000,
  Conformance1763700700000,
  EventStream1763700900000,
  AuditEvents1795553649366,
  TaskEventTrace1795553876351,
  StandingChanges1795600000000,
  AdmissionVersion1795700000000,
  TaskAtSeq1795800000000,
  ConsoleEmailKey1796439327973,
  AskAndApproval1796451758038,
  KeyLifetimes1796452176771,
  Approvals1796452298737,
  PerSkillPolicy1796452504827,
  TrustedIssuers1796453000000,
  ConsoleSso1796460000000,
  DelegationUsageBudgets1796470000000,
  RankedSearch1796500000000,
  AiCatalog1796500100000,
  UpstreamCardTrust1796500200000,
  Availability1796500300000,
  DeliveryResponses1796510000000,
  TrustedIssuerKeys1796513900000,
  IdentitySearchTerms1796520000000,
  IdentityNameWords1796530000000,
];
