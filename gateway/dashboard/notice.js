// The page's one message line: errors from the API in its own words, and confirmations.
import { find } from './dom.js';

const notice = document.getElementById('notice');
find(notice, '.notice-close').addEventListener('click', () => clearNotice());

/** Shows an error (an ApiError's message, or any other error's) until dismissed or replaced. */
export function showError(error) {
  show(error?.message ?? String(error), 'error');
}

export function showInfo(text) {
  show(text, 'info');
}

export function clearNotice() {
  notice.hidden = true;
}

function show(text, kind) {
  find(notice, '.notice-text').textContent = text;
  notice.className = `notice notice-${kind}`;
  notice.hidden = false;
}

/** Runs `action`, showing its failure instead of throwing it. */
export async function attempt(action) {
  try {
    return await action();
  } catch (error) {
    showError(error);
    return undefined;
  }
}
