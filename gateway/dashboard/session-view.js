// One session: its facts and worker state, rename, stop and delete, and its results. While the
// session is active they come live over the WebSocket, after what was stored before the page
// opened; a finished session's are read from the API at the granularity asked for.
import { allPages } from './api.js';
import { clone, find, setBadge, setText } from './dom.js';
import { duration, stopReason, when } from './format.js';
import { attempt, clearNotice, showError, showInfo } from './notice.js';
import { Results } from './results.js';

const GRANULARITIES = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
/** Points a finished session's charts get by default, at most. */
const DEFAULT_POINTS = 720;
/** The last seconds before the page opened may not be stored yet: they are left to the live feed. */
const SETTLING_SECONDS = 3;
/** History at the finest granularity the API has, so it meets the live seconds. */
const LIVE_HISTORY_GRANULARITY = 5;
/** Transcript segments and events read from the API, at most. */
const MAX_ITEMS = 5000;
const REFRESH_MS = 5000;

const defaultGranularity = (seconds) => GRANULARITIES.find((g) => seconds / g <= DEFAULT_POINTS) ?? 3600;

export function sessionView(root, { api, live }, id) {
  root.replaceChildren(clone('session-view'));
  const results = new Results(root);
  const granularityForm = find(root, 'form.granularity');
  const renameForm = find(root, 'form.rename');
  let session;
  let fetchedAt = 0;
  let closed = false;
  let following = false;
  let loads = 0;
  const endLive = [];

  /** The session as last read (or answered by a change), and how long it has run by now. */
  function show(current) {
    session = current;
    fetchedAt = performance.now();
    setText(root, '.crumb-name', current.name);
    setText(root, 'h1.name', current.name);
    setBadge(find(root, '.facts .state'), current.state);
    setBadge(find(root, '.facts .worker'), current.meta.workerState);
    showStopReason(current.meta.stopReason);
    find(root, '.failure-fact').hidden = !current.meta.failure;
    setText(root, '.failure', current.meta.failure ?? '');
    setText(root, '.created', when(current.timestamp));
    setText(root, '.media', duration(current.meta.mediaSeconds));
    setText(root, '.stream', current.sources[0]?.name ?? '');
    find(root, 'button.stop').hidden = current.state !== 'active';
    find(root, 'button.delete').hidden = current.state === 'active';
    tick();
  }

  function showStopReason(reason) {
    find(root, '.stop-reason-fact').hidden = !reason;
    setText(root, '.stop-reason', reason ? stopReason(reason) : '');
  }

  function tick() {
    const seconds = session.duration + (session.state === 'active' ? (performance.now() - fetchedAt) / 1000 : 0);
    setText(root, '.facts .duration', duration(seconds));
    results.axis.extend(seconds);
  }

  async function refresh() {
    const current = await attempt(() => api.getSession(id));
    if (!current || closed) return;
    show(current);
    if (current.state === 'finished') finished();
  }

  function followLive() {
    following = true;
    setText(root, '.mode', 'Live: every second');
    // History before the page opened comes from the API, the rest from the feeds.
    const since = Math.max(0, Math.floor(session.duration - SETTLING_SECONDS));
    const feed = (channel, onData) => endLive.push(live.subscribe(channel, `${id}:1s`, onData, showError));
    endLive.push(live.subscribe('session_worker_state', id, workerState, showError));
    feed('session_emotions_counts', (p) => {
      if (p.from < since) return;
      const shares = Object.fromEntries(Object.entries(p.emotions).map(([key, n]) => [key, p.faceSeconds ? n / p.faceSeconds : 0]));
      results.emotionsAt(p.from, shares, p.tracks);
    });
    feed('session_audio_features', (p) => p.from >= since && results.audioAt(p.from, p.voicedSeconds ? p.frequency : null, p.intensity));
    feed('session_transcription', (p) => {
      const segments = p.segments.filter((s) => s.start >= since);
      results.addSegments(segments.map(({ start, end, text, ...sentiments }) => ({ start, end, text, sentiments })));
      for (const s of segments) results.sentimentAt(s.start, s);
    });
    // Events carry the time their client gave, earlier ones too: all of them are shown.
    feed('session_custom_events', async (p) => {
      // A source registered since the session was read: read it again for the source's name.
      if (p.events.some((event) => !results.hasSource(event.source))) {
        const current = await attempt(() => api.getSession(id));
        if (closed) return;
        if (current) results.setSources(current.sources);
      }
      results.addEvents(p.events);
    });
    if (since > 0) load(LIVE_HISTORY_GRANULARITY, since, false);
    const ticker = setInterval(tick, 1000);
    const poller = setInterval(refresh, REFRESH_MS);
    endLive.push(() => clearInterval(ticker), () => clearInterval(poller));
  }

  function workerState({ state, stopReason: reason }) {
    setBadge(find(root, '.facts .worker'), state);
    if (reason) showStopReason(reason);
    if (reason || state === 'stopped' || state === 'failed') refresh();
  }

  /** The session has ended while followed: the feeds stop, what they brought stays until another granularity is asked for. */
  function finished() {
    if (!following) return;
    following = false;
    for (const end of endLive.splice(0)) end();
    setText(root, '.mode', 'Finished: the live data as it came; choose a granularity to read the stored results');
    showGranularity(defaultGranularity(session.duration));
  }

  function showGranularity(granularity) {
    granularityForm.elements.granularity.value = String(granularity);
    granularityForm.hidden = false;
  }

  /**
   * Reads the stored results at `granularity` up to `end` (the whole session if undefined).
   * `replace`: what is shown goes (a granularity asked for); otherwise they are added (history
   * before the live data).
   */
  async function load(granularity, end, replace) {
    const generation = ++loads;
    const range = end === undefined ? {} : { end };
    const timeline = (which) => api.timeline(id, which, { granularity, ...range });
    const read = await attempt(() =>
      Promise.all([
        timeline('emotions/timeline'),
        timeline('audio/features'),
        timeline('audio/transcription-sentiment'),
        allPages((page) => api.transcription(id, { ...page, ...range }), MAX_ITEMS),
        allPages((page) => api.events(id, { ...page, ...(end === undefined ? {} : { to: end }) }), MAX_ITEMS),
      ]),
    );
    if (!read || closed || generation !== loads) return;
    const [emotions, audio, sentiment, transcript, events] = read;
    if (replace) results.clear();
    for (const entry of emotions.timeline) {
      const shares = Object.fromEntries(Object.entries(entry.emotions).map(([key, value]) => [key, value.quantity]));
      results.emotionsAt(entry.start, shares, entry.detectedFaces, entry.reducedEffortSeconds);
    }
    for (const entry of audio.timeline) results.audioAt(entry.start, entry.frequency || null, entry.intensity);
    for (const entry of sentiment.timeline) results.sentimentAt(entry.start, entry.sentiments);
    results.addSegments(transcript.items);
    results.addEvents(events.items);
    if (transcript.truncated || events.truncated) showInfo(`Only the first ${MAX_ITEMS} transcript segments and events are shown.`);
  }

  granularityForm.addEventListener('submit', (event) => {
    event.preventDefault();
    clearNotice();
    const granularity = Number(granularityForm.elements.granularity.value);
    setText(root, '.mode', `Stored results in ${granularity}-second intervals`);
    load(granularity, undefined, true);
  });

  find(root, 'button.rename-start').addEventListener('click', () => {
    renameForm.elements.name.value = session.name;
    renameForm.hidden = false;
    renameForm.elements.name.focus();
  });
  find(renameForm, 'button.cancel').addEventListener('click', () => (renameForm.hidden = true));
  renameForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearNotice();
    const renamed = await attempt(() => api.renameSession(id, renameForm.elements.name.value));
    if (!renamed || closed) return;
    renameForm.hidden = true;
    show(renamed);
  });

  find(root, 'button.stop').addEventListener('click', async () => {
    clearNotice();
    const stopped = await attempt(() => api.stopSession(id));
    if (!stopped || closed) return;
    show(stopped);
    finished();
  });

  find(root, 'button.delete').addEventListener('click', async () => {
    if (!confirm(`Delete the session "${session.name}" and all its results?`)) return;
    clearNotice();
    if (!(await attempt(() => api.deleteSession(id)))) return;
    location.hash = '#/';
    showInfo(`The session "${session.name}" was deleted.`);
  });

  (async () => {
    const current = await attempt(() => api.getSession(id));
    if (!current || closed) return;
    show(current);
    results.setSources(current.sources);
    if (current.state === 'active') return followLive();
    const granularity = defaultGranularity(current.duration);
    showGranularity(granularity);
    setText(root, '.mode', `Stored results in ${granularity}-second intervals`);
    load(granularity, undefined, true);
  })();

  return () => {
    closed = true;
    for (const end of endLive.splice(0)) end();
    results.destroy();
  };
}
