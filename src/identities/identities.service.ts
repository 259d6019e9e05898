import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { Identity } from './identity.entity';

/**
 * Identity rows for the rest of the service. Other modules (admission, protocol,
 * ledger) look identities up here rather than querying the table themselves.
 */
@Injectable()
export class IdentitiesService {
  constructor(@InjectRepository(Identity) private readonly identities: Repository<Identity>) {}

  /** Any identity with this handle, whatever its state (handles are never reused). */
  findByHandle(handle: string): Promise<Identity | null> {
    return this.identities.findOneBy({ agentHandle: handle });
  }

  findById(id: string): Promise<Identity | null> {
    return this.identities.findOneBy({ id });
  }

  /** Several identities in one query (to show the handles a page of rows names). */
  async findByIds(ids: readonly string[]): Promise<Identity[]> {
    return ids.length === 0 ? [] : this.identities.findBy({ id: In([...new Set(ids)]) });
  }

  /**
   * The identity that may be served at /a2a/{handle} (card and protocol): claimed,
   * receiver enabled and not deleted; otherwise null (→ 404).
   */
  async findServable(handle: string): Promise<Identity | null> {
    const identity = await this.findByHandle(handle);
    return identity && identity.claimed && identity.enabled && identity.status === 'active' ? identity : null;
  }
}
