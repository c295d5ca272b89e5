// The dashboard's entry point. Signing in checks the token on the WebSocket (which also says
// whose it is) and keeps it in sessionStorage: it lives as long as this browser tab, never on
// disk. Then the location's hash picks the view: #/ the sessions, #/sessions/<id> one session.
import { createApi } from './api.js';
import { clone, find } from './dom.js';
import { Live } from './live.js';
import { attempt, clearNotice, showError } from './notice.js';
import { sessionView } from './session-view.js';
import { sessionsView } from './sessions-view.js';

const TOKEN_KEY = 'emotion-stream.token';
const view = document.getElementById('view');
const user = document.getElementById('user');
const liveStatus = document.getElementById('live-status');
const signOutButton = document.getElementById('sign-out');
let signedIn; // {api, live}
let leave; // ends the current view: its subscriptions and timers

async function signIn(token) {
  const live = new Live(token, { onStatus: (text) => (liveStatus.textContent = text), onUnauthorized: signOut });
  let who;
  try {
    who = await live.connect();
  } catch (error) {
    live.close();
    throw error;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  signedIn = { api: createApi(token, signOut), live };
  user.textContent = who.user;
  signOutButton.hidden = false;
  route();
}

/** Forgets the token; `error` says why, when the service refused it. */
function signOut(error) {
  sessionStorage.removeItem(TOKEN_KEY);
  signedIn?.live.close();
  signedIn = undefined;
  user.textContent = '';
  liveStatus.textContent = '';
  signOutButton.hidden = true;
  showSignIn();
  if (error) showError(error);
}

function showSignIn() {
  leave?.();
  leave = undefined;
  view.replaceChildren(clone('sign-in-view'));
  const form = find(view, 'form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearNotice();
    attempt(() => signIn(form.elements.token.value.trim()));
  });
}

function route() {
  if (!signedIn) return;
  leave?.();
  const session = /^#\/sessions\/([^/]+)$/.exec(location.hash);
  leave = session ? sessionView(view, signedIn, decodeURIComponent(session[1])) : sessionsView(view, signedIn);
}

window.addEventListener('hashchange', route);
signOutButton.addEventListener('click', () => signOut());

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) {
  attempt(() => signIn(saved)).then(() => signedIn || showSignIn());
} else {
  showSignIn();
}
