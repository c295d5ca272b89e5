// Small DOM helpers: views are <template>s of index.html, filled in with text (never HTML).

/** A copy of template `id`'s content. */
export function clone(id) {
  return document.getElementById(id).content.cloneNode(true);
}

/** The element matching `selector` in `root`; throws if there is none, as that is a bug. */
export function find(root, selector) {
  const element = root.querySelector(selector);
  if (!element) throw new Error(`no ${selector} in the view`);
  return element;
}

/** Sets the text of `selector` in `root`. */
export function setText(root, selector, value) {
  find(root, selector).textContent = value;
}

/** A state badge (class `badge`): its text, and the attribute its colour comes from. */
export function setBadge(element, value) {
  element.textContent = value ?? '';
  element.dataset.state = value ?? '';
}

/** A table row of plain text cells. */
export function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell;
    tr.append(td);
  }
  return tr;
}
