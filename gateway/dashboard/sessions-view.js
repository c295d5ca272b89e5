// The sessions: a form to create one, the list with its state and date filters and pages,
// and stop or delete on each row.
import { clone, find, setBadge } from './dom.js';
import { dayStart, duration, when } from './format.js';
import { attempt, clearNotice, showInfo } from './notice.js';

// Kept while the page is open, so coming back from a session shows the same page of the list.
const filters = { state: '', from: '', to: '', limit: '10', offset: 0 };

export function sessionsView(root, { api }) {
  root.replaceChildren(clone('sessions-view'));
  const filterForm = find(root, 'form.filters');
  const body = find(root, 'table.sessions tbody');
  let loads = 0;

  for (const name of ['state', 'from', 'to', 'limit']) filterForm.elements[name].value = filters[name];
  filterForm.addEventListener('change', () => {
    for (const name of ['state', 'from', 'to', 'limit']) filters[name] = filterForm.elements[name].value;
    filters.offset = 0;
    load();
  });
  find(root, 'button.refresh').addEventListener('click', () => load());
  find(root, 'button.previous').addEventListener('click', () => {
    filters.offset = Math.max(0, filters.offset - Number(filters.limit));
    load();
  });
  find(root, 'button.next').addEventListener('click', () => {
    filters.offset += Number(filters.limit);
    load();
  });

  const createForm = find(root, 'form.create');
  createForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearNotice();
    const { name, streamUri } = createForm.elements;
    const created = await attempt(() => api.createSession(name.value, streamUri.value.trim()));
    if (created) location.hash = `#/sessions/${encodeURIComponent(created._id)}`;
  });

  async function load() {
    const generation = ++loads;
    const page = await attempt(() =>
      api.listSessions({
        state: filters.state,
        // The days picked are whole local days, `to` included.
        from: dayStart(filters.from),
        to: dayStart(filters.to, 1),
        limit: filters.limit,
        offset: filters.offset,
      }),
    );
    if (!page || generation !== loads) return;
    body.replaceChildren(...page.data.map(sessionRow));
    find(root, '.empty').hidden = page.data.length > 0;
    const first = page.offset + 1;
    find(root, '.range').textContent = page.data.length ? `${first}-${page.offset + page.data.length}` : '';
    find(root, 'button.previous').disabled = page.offset === 0;
    find(root, 'button.next').disabled = !page.hasMore;
  }

  function sessionRow(session) {
    const tr = clone('session-row').firstElementChild;
    const link = find(tr, 'a.name');
    link.textContent = session.name;
    link.href = `#/sessions/${encodeURIComponent(session._id)}`;
    setBadge(find(tr, '.state'), session.state);
    setBadge(find(tr, '.worker'), session.meta.workerState);
    find(tr, '.created').textContent = when(session.timestamp);
    find(tr, '.duration').textContent = duration(session.duration);
    const stop = find(tr, 'button.stop');
    stop.hidden = session.state !== 'active';
    stop.addEventListener('click', async () => {
      clearNotice();
      if (await attempt(() => api.stopSession(session._id))) load();
    });
    const remove = find(tr, 'button.delete');
    remove.hidden = session.state === 'active';
    remove.addEventListener('click', async () => {
      if (!confirm(`Delete the session "${session.name}" and all its results?`)) return;
      clearNotice();
      if (!(await attempt(() => api.deleteSession(session._id)))) return;
      showInfo(`The session "${session.name}" was deleted.`);
      load();
    });
    return tr;
  }

  load();
  return () => {
    loads++; // a page still loading is not shown
  };
}
