import { useEffect, useRef, useState } from 'react';
import type { components } from '../../../client';
import { api, ApiError, call } from '../api';
import { EmptyState, StartAt } from '../empty-state';
import { Link } from '../router';
import { ErrorNotice, Select, when, usePageTitle } from '../ui';
import { useUrlFilters } from '../url-filters';

type StreamedEvent = components['schemas']['Event'];
type EventType = StreamedEvent['type'];

/** Every event type (the compiler refuses a type of the API missing here), in words. */
const TYPES: Record<EventType, string> = {
  'task.created': 'a task was created',
  'task.message': 'a task got a message',
  'task.status': "a task's state changed",
  'task.artifact': 'a task got an artifact',
  'api_key.created': 'a key was minted',
  'api_key.revoked': 'a key was revoked',
  'api_key.expiring': 'a key expires soon',
  'identity.claimed': 'an identity was claimed',
  'identity.updated': 'an identity was changed',
  'contact_rule.created': 'a contact rule was created',
  'contact_rule.updated': 'a contact rule was changed',
  'contact_rule.deleted': 'a contact rule was deleted',
  'console.member_added': 'a member joined',
  'console.member_removed': 'a member was removed',
  'approval.requested': 'an approval was requested',
  'approval.decided': 'an approval was decided',
  'usage.threshold': "an identity's budget reached a threshold",
  ping: 'a test event',
};

/** How many recent events the page starts with, and keeps. */
const RECENT = 50;
const KEPT = 500;

type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

const CONNECTION: Record<Connection, string> = {
  connecting: 'Connecting…',
  live: 'Live: new events appear as they happen.',
  reconnecting: 'Connection lost; reconnecting, then resuming after the last event shown…',
  closed: 'The stream stopped.',
};

/**
 * The organization's events as they happen (docs/api.md §14, "The event stream"): the
 * recent ones from the list, then the stream after the newest. A dropped connection is
 * resumed by the browser with Last-Event-ID (the server asks for a retry after 1 s);
 * "Reconnect" after a stop resumes after the last event shown.
 */
export function EventsPage() {
  usePageTitle('Events');
  const [filters, setFilters] = useUrlFilters({ type: '' });
  const type = filters.type as EventType | '';
  const [events, setEvents] = useState<StreamedEvent[]>([]);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  /** The newest event shown, and the filter it was shown under. */
  const newest = useRef<{ type: string; id: string | undefined } | null>(null);

  useEffect(() => {
    let source: EventSource | null = null;
    let stopped = false;
    setConnection('connecting');
    setError(null);
    const start = async () => {
      let after: string | undefined;
      if (newest.current?.type === type) {
        after = newest.current.id;
      } else {
        try {
          const page = await call(
            api.GET('/api/v1/events', { params: { query: { type: type ? [type] : undefined, limit: RECENT } } }),
          );
          if (stopped) {
            return;
          }
          setEvents(page.events);
          after = page.events[0]?.id;
          newest.current = { type, id: after };
        } catch (failure) {
          if (!stopped) {
            setError(failure);
            setConnection('closed');
          }
          return;
        }
      }
      const url = new URL('/api/v1/events/stream', window.location.origin);
      if (type) {
        url.searchParams.set('type', type);
      }
      if (after) {
        url.searchParams.set('after', after);
      }
      const stream = new EventSource(url);
      source = stream;
      stream.onopen = () => setConnection('live');
      stream.onmessage = (message: MessageEvent<string>) => {
        const event = JSON.parse(message.data) as StreamedEvent;
        newest.current = { type, id: event.id };
        setEvents((shown) => (shown.some((e) => e.id === event.id) ? shown : [event, ...shown].slice(0, KEPT)));
      };
      stream.addEventListener('error', (message) => {
        // The server's own `event: error` (the session ended) carries the problem; a dropped
        // connection is a plain error event, after which the browser reconnects by itself.
        if (message instanceof MessageEvent && typeof message.data === 'string') {
          setError(new ApiError(JSON.parse(message.data)));
          stream.close();
        }
        setConnection(stream.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
      });
    };
    void start();
    return () => {
      stopped = true;
      source?.close();
    };
  }, [type, attempt]);

  return (
    <>
      <h1>Events</h1>
      <p className="muted">
        Your organization&apos;s events as they happen: the stream a worker without a public URL follows (
        <code>GET /api/v1/events/stream</code>, resumable with <code>Last-Event-ID</code>) and webhooks receive.
      </p>
      <section aria-labelledby="events-title">
        <h2 id="events-title">Live events</h2>
        <div className="filters short">
          <Select label="Event type" value={type} onChange={(e) => setFilters({ type: e.target.value })}>
            <option value="">every type</option>
            {Object.entries(TYPES).map(([name, words]) => (
              <option key={name} value={name}>
                {name} ({words})
              </option>
            ))}
          </Select>
        </div>
        <p role="status" className={`stream-state ${connection}`}>
          {CONNECTION[connection]}
        </p>
        <ErrorNotice error={error} />
        {connection === 'closed' && (
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>
            Reconnect
          </button>
        )}
        {events.length === 0 ? (
          type ? (
            <p className="muted">No {type} events yet; they appear here as they happen.</p>
          ) : (
            <EmptyState title="No events yet." actions={<StartAt to="/identities">Create an identity</StartAt>}>
              An event is a change your organization&apos;s programs may react to: a task created or answered, a key
              minted or revoked, an identity or contact rule changed, an approval requested. They appear here as they
              happen, and go to your webhooks.
            </EmptyState>
          )
        ) : (
          <ul className="cards events" aria-label="Events">
            {events.map((event) => (
              <EventRow key={event.id} event={event} />
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function EventRow({ event }: { event: StreamedEvent }) {
  const task = event.data.task as { id?: string; requester?: Party; worker?: Party } | undefined;
  return (
    <li>
      <span className="badge">{event.type}</span> <span className="muted">{when(event.created_at)}</span>
      <div>
        {summary(event)}
        {task?.id && (
          <>
            {' '}
            <Link to={`/tasks/${task.id}`}>Open the task</Link>
          </>
        )}
      </div>
      <details>
        <summary>
          Details<span className="visually-hidden"> of {event.id}</span>
        </summary>
        <pre className="part">{JSON.stringify(event, null, 2)}</pre>
      </details>
    </li>
  );
}

interface Party {
  agent_handle?: string;
}

/** One line about an event, from the fields its type carries (docs/api.md §8, "Event types"). */
function summary(event: StreamedEvent): string {
  const data = event.data as Record<string, Record<string, unknown> | undefined>;
  const words = TYPES[event.type];
  const sentence = words.charAt(0).toUpperCase() + words.slice(1);
  const task = data.task as { requester?: Party; worker?: Party; status?: { state?: string } } | undefined;
  if (task) {
    const state = (data.status?.state as string | undefined) ?? task.status?.state;
    return `${sentence}: ${task.requester?.agent_handle ?? '?'} → ${task.worker?.agent_handle ?? '?'}${state ? `, ${state}` : ''}.`;
  }
  const approval = data.approval as { requester?: { handle?: string }; worker?: { handle?: string } } | undefined;
  if (approval) {
    return `${sentence}: ${approval.requester?.handle ?? '?'} → ${approval.worker?.handle ?? '?'}.`;
  }
  const named = data.api_key?.label || data.api_key?.prefix || data.identity?.agent_handle || data.member?.email;
  return typeof named === 'string' ? `${sentence}: ${named}.` : `${sentence}.`;
}
