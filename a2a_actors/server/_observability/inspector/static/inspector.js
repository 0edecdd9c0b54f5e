// The inspector page: the task table, a task's timeline and hop tree, live over SSE.
// No dependencies and no build step. Every text from the server is set with textContent
// (never as HTML): task messages are whatever agents and clients wrote.
// Credentials, when the server asks for them, stay in this tab's sessionStorage and go out
// as a request header (the server's API-key header or Authorization: Bearer), never in a
// URL; the stream is read with fetch() for the same reason (EventSource sends no headers).

const STORE = "a2a-actors-inspector-credentials";
const TERMINAL = new Set(["completed", "failed", "canceled", "rejected"]);
const MAX_ROWS = 500; // rows kept; past it the oldest go (a busy server never fills the page)
const $ = (id) => document.getElementById(id);

const view = {
  rows: new Map(), // task id -> row (as the API gives it, merged with live updates)
  trs: new Map(), // task id -> <tr>
  selected: "",
  treeIds: new Set(),
  treeTimer: 0,
  nextPageToken: "",
  apiKeyHeader: "X-API-Key",
  generation: 0, // bumped by every full reload; a stale page of tasks is ignored
  loading: 0, // task pages being read: live updates wait (held) and are applied after
  held: [],
};

class AuthNeeded extends Error {}

function credentials() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE) || "null");
  } catch {
    return null;
  }
}

function headers() {
  const found = credentials();
  if (!found) return {};
  if (found.kind === "bearer") return { Authorization: `Bearer ${found.secret}` };
  return { [found.header || view.apiKeyHeader]: found.secret };
}

async function api(path) {
  const response = await fetch(path, { headers: headers(), cache: "no-store" });
  if (response.status === 401) {
    askForCredentials(response.headers.get("WWW-Authenticate") || "");
    throw new AuthNeeded();
  }
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message || `HTTP ${response.status}`);
  return body;
}

// -- credentials --------------------------------------------------------------------------

function askForCredentials(challenge) {
  const header = /ApiKey[^,]*header="([^"]+)"/i.exec(challenge);
  if (header) view.apiKeyHeader = header[1];
  const kinds = $("auth-kind");
  for (const option of kinds.options) {
    const offered = option.value === "bearer" ? /Bearer/i.test(challenge) : /ApiKey/i.test(challenge);
    option.disabled = challenge !== "" && !offered;
    if (option.value === "apikey") option.textContent = `API key (${view.apiKeyHeader})`;
  }
  if (kinds.selectedOptions[0]?.disabled) kinds.selectedIndex = kinds.options[0].disabled ? 1 : 0;
  $("auth-error").textContent = credentials() ? "Those credentials were refused." : "";
  $("auth").hidden = false;
  setConnection("offline", "Needs credentials");
  $("auth-secret").focus();
}

$("auth-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const kind = $("auth-kind").value;
  const secret = $("auth-secret").value.trim();
  if (!secret) return;
  sessionStorage.setItem(STORE, JSON.stringify({ kind, secret, header: view.apiKeyHeader }));
  $("auth-secret").value = "";
  $("auth").hidden = true;
  $("forget").hidden = false;
  start();
});

$("forget").addEventListener("click", () => {
  sessionStorage.removeItem(STORE);
  location.reload();
});

// -- the table ------------------------------------------------------------------------------

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
}

function stateBadge(state) {
  const span = document.createElement("span");
  span.className = `state state-${state || "unknown"}`;
  span.textContent = state || "unknown";
  return span;
}

function age(iso) {
  if (!iso) return "";
  const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (seconds < 60) return `${Math.floor(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} d`;
}

function shortId(id) {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

function messageText(message) {
  return message ? `${message.role}: ${message.text}` : "";
}

function matches(row) {
  const wanted = $("filter-state").value;
  if (wanted && row.state !== wanted) return false;
  const text = $("filter-text").value.trim().toLowerCase();
  if (!text) return true;
  const haystack = [row.id, row.contextId, row.agent, row.state, row.lastMessage?.text]
    .join(" ")
    .toLowerCase();
  return haystack.includes(text);
}

function sortKey(row) {
  return row.startedAt || row.updatedAt || "";
}

function makeRow(row) {
  const tr = document.createElement("tr");
  tr.dataset.id = row.id;
  const head = document.createElement("th");
  head.scope = "row";
  const button = document.createElement("button");
  button.type = "button";
  button.className = "task-link";
  button.addEventListener("click", () => select(row.id, true).catch(report));
  head.append(button);
  tr.append(head);
  for (const name of ["agent", "state", "age", "message"]) {
    const td = document.createElement("td");
    td.className = `cell-${name}`;
    tr.append(td);
  }
  return tr;
}

function fillRow(tr, row) {
  const button = tr.querySelector(".task-link");
  button.textContent = shortId(row.id);
  button.setAttribute("aria-label", `Task ${row.id}`);
  button.title = row.id;
  tr.querySelector(".cell-agent").textContent = row.agent || "";
  tr.querySelector(".cell-state").replaceChildren(stateBadge(row.state));
  tr.querySelector(".cell-age").textContent = age(row.startedAt || row.updatedAt);
  tr.querySelector(".cell-message").textContent = messageText(row.lastMessage);
  tr.hidden = !matches(row);
  if (row.id === view.selected) tr.setAttribute("aria-current", "true");
  else tr.removeAttribute("aria-current");
}

// Rows keep their place once shown (newest first by start): a row that moved would take
// the keyboard focus away from its button.
function placeRow(row) {
  let tr = view.trs.get(row.id);
  if (!tr) {
    tr = makeRow(row);
    view.trs.set(row.id, tr);
    const body = $("task-table").tBodies[0];
    const key = sortKey(row);
    let before = null;
    for (const other of body.rows) {
      if (sortKey(view.rows.get(other.dataset.id)) < key) {
        before = other;
        break;
      }
    }
    body.insertBefore(tr, before);
    while (view.trs.size > MAX_ROWS) dropOldest(body);
  }
  fillRow(tr, row);
}

function dropOldest(body) {
  let last = body.rows[body.rows.length - 1];
  if (last.dataset.id === view.selected) last = body.rows[body.rows.length - 2];
  view.trs.delete(last.dataset.id);
  view.rows.delete(last.dataset.id);
  last.remove();
  view.nextPageToken = "";
  $("more").hidden = true; // the list is no longer a prefix of the pages: reload to page
}

function updateCaption() {
  let shown = 0;
  for (const tr of view.trs.values()) if (!tr.hidden) shown += 1;
  const total = view.rows.size;
  $("task-caption").textContent =
    shown === total ? `${total} task${total === 1 ? "" : "s"}` : `${shown} of ${total} tasks shown`;
}

function applyFilters() {
  for (const [id, tr] of view.trs) tr.hidden = !matches(view.rows.get(id));
  updateCaption();
}

async function loadTasks({ append = false } = {}) {
  const generation = append ? view.generation : ++view.generation;
  const query = new URLSearchParams({ pageSize: "50" });
  const state = $("filter-state").value;
  if (state) query.set("state", state);
  if (append && view.nextPageToken) query.set("pageToken", view.nextPageToken);
  view.loading += 1;
  let page;
  try {
    page = await api(`api/tasks?${query}`);
  } finally {
    view.loading -= 1;
  }
  if (generation !== view.generation) return;
  $("agent").textContent = `· ${page.agent}`;
  if (!append) {
    view.rows.clear();
    view.trs.clear();
    $("task-table").tBodies[0].replaceChildren();
  }
  view.nextPageToken = page.nextPageToken;
  $("more").hidden = !page.nextPageToken;
  for (const row of page.tasks) {
    view.rows.set(row.id, { ...view.rows.get(row.id), ...row });
    placeRow(view.rows.get(row.id));
  }
  updateCaption();
  // Updates that came while the page was read are newer than (or as new as) its rows.
  if (!view.loading) for (const update of view.held.splice(0)) onUpdate(update);
}

$("filter-state").addEventListener("change", () => loadTasks().catch(report));
$("filter-text").addEventListener("input", applyFilters);
$("more").addEventListener("click", () => loadTasks({ append: true }).catch(report));
setInterval(() => {
  for (const [id, tr] of view.trs) {
    const row = view.rows.get(id);
    tr.querySelector(".cell-age").textContent = age(row.startedAt || row.updatedAt);
  }
}, 1000);

// -- announcements (aria-live), at most one every two seconds -------------------------------

const pending = [];
let announceTimer = 0;
function announce(text) {
  pending.push(text);
  if (announceTimer) return;
  announceTimer = setTimeout(() => {
    announceTimer = 0;
    const said = pending.splice(0);
    $("announce").textContent =
      said.length > 3 ? `${said.length} task updates; latest: ${said.at(-1)}` : said.join(". ");
  }, 250);
}

// -- one task: facts, timeline, hop tree ----------------------------------------------------

function time(iso) {
  const node = document.createElement("time");
  if (iso) {
    node.dateTime = iso;
    node.textContent = new Date(iso).toLocaleTimeString([], { hour12: false });
  } else {
    node.textContent = "—";
  }
  return node;
}

function timelineItem(entry) {
  const li = document.createElement("li");
  li.append(time(entry.at));
  if (entry.kind === "artifact") {
    li.append(`artifact ${entry.name}${entry.append ? " (appended)" : ""}: ${entry.text}`);
  } else if (entry.kind === "message") {
    li.append(messageText(entry.message));
  } else {
    li.append(entry.kind === "created" ? "created " : "");
    li.append(stateBadge(entry.state));
    if (entry.message) li.append(` ${messageText(entry.message)}`);
  }
  return li;
}

function fact(list, name, value) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  if (value instanceof Node) dd.append(value);
  else dd.textContent = value;
  list.append(dt, dd);
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  a.rel = "noopener noreferrer";
  return a;
}

function renderFacts(detail) {
  const task = detail.task;
  const facts = $("facts");
  facts.replaceChildren();
  fact(facts, "Task", task.id);
  fact(facts, "Context", task.contextId || "");
  fact(facts, "Agent", task.agent || "");
  fact(facts, "State", stateBadge(task.state));
  if (detail.traceId) fact(facts, "Trace", detail.traceId);
  if (detail.parent) {
    const parent = detail.parent;
    const label = `${parent.agent || "?"} · task ${shortId(parent.taskId)}`;
    fact(facts, "Parent", parent.inspectUrl ? link(parent.inspectUrl, label) : label);
  }
}

async function select(id, focus = false) {
  view.selected = id;
  for (const [other, tr] of view.trs) {
    if (other === id) tr.setAttribute("aria-current", "true");
    else tr.removeAttribute("aria-current");
  }
  history.replaceState(null, "", `#task=${encodeURIComponent(id)}`);
  const detail = await api(`api/tasks/${encodeURIComponent(id)}/events`);
  if (view.selected !== id) return;
  $("detail").hidden = false;
  $("detail-title").textContent = `Task ${shortId(id)}`;
  renderFacts(detail);
  $("timeline-source").textContent =
    detail.source === "recorded"
      ? "Events as this server published them."
      : "Read from the task's snapshot: its events were not recorded (the inspector started later, or forgot them).";
  $("timeline").replaceChildren(...detail.events.map(timelineItem));
  if (focus) $("detail-title").focus();
  await loadTree(id);
}

function treeNode(node) {
  const li = document.createElement("li");
  li.dataset.taskId = node.taskId;
  li.dataset.agent = node.agent;
  const hop = document.createElement("span");
  hop.className = "hop";
  const name = document.createElement("strong");
  name.textContent = node.agent;
  hop.append(name, stateBadge(node.state));
  const where = document.createElement("span");
  where.className = "where";
  const took = node.durationMs == null ? "" : ` · ${(node.durationMs / 1000).toFixed(2)} s`;
  where.textContent = `depth ${node.depth}${took}`;
  hop.append(where);
  if (node.local && node.reachable) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "task-link";
    button.textContent = shortId(node.taskId);
    button.setAttribute("aria-label", `Open task ${node.taskId} (${node.agent})`);
    button.addEventListener("click", () => select(node.taskId, true).catch(report));
    hop.append(button);
  } else if (node.inspectUrl) {
    hop.append(link(node.inspectUrl, `${shortId(node.taskId)} on ${new URL(node.url).host}`));
  } else {
    const id = document.createElement("span");
    id.textContent = shortId(node.taskId);
    hop.append(id);
  }
  if (!node.reachable) {
    const unseen = document.createElement("span");
    unseen.className = "where";
    unseen.textContent = "(as its parent last saw it)";
    hop.append(unseen);
  }
  li.append(hop);
  if (node.children.length) {
    const list = document.createElement("ul");
    list.append(...node.children.map(treeNode));
    li.append(list);
  }
  return li;
}

function collect(node, ids, open) {
  ids.add(node.taskId);
  if (!TERMINAL.has(node.state)) open.value = true;
  for (const child of node.children) collect(child, ids, open);
}

async function loadTree(id) {
  clearTimeout(view.treeTimer);
  const tree = await api(`api/tasks/${encodeURIComponent(id)}/tree`);
  if (view.selected !== id) return;
  const container = $("tree");
  if (!tree.children.length) {
    const note = document.createElement("p");
    note.className = "note";
    note.textContent = "No delegation: this task has no child tasks.";
    container.replaceChildren(note);
  } else {
    const root = document.createElement("ul");
    root.className = "tree";
    root.append(treeNode(tree));
    container.replaceChildren(root);
  }
  const ids = new Set();
  const open = { value: false };
  collect(tree, ids, open);
  view.treeIds = ids;
  // Hops on other servers send this page no events: while any hop runs, read again.
  if (open.value) view.treeTimer = setTimeout(() => refreshTree(id), 2000);
}

function refreshTree(id) {
  if (view.selected === id) loadTree(id).catch(report);
}

// -- the live stream ------------------------------------------------------------------------

function onUpdate(update) {
  if (view.loading) {
    view.held.push(update);
    return;
  }
  const before = view.rows.get(update.row.id);
  const row = { ...before, ...update.row };
  view.rows.set(row.id, row);
  placeRow(row);
  updateCaption();
  if (update.entry.kind !== "artifact" && before?.state !== row.state) {
    announce(`Task ${shortId(row.id)} (${row.agent}) is ${row.state}`);
  }
  if (row.id === view.selected) {
    $("timeline").append(timelineItem(update.entry));
    const facts = $("facts");
    if (facts.children.length) {
      facts.querySelector("dd .state")?.replaceWith(stateBadge(row.state));
    }
  }
  if (view.treeIds.has(row.id)) {
    clearTimeout(view.treeTimer);
    view.treeTimer = setTimeout(() => refreshTree(view.selected), 300);
  }
}

async function follow() {
  let delay = 1000;
  for (;;) {
    try {
      const response = await fetch("api/stream", { headers: headers(), cache: "no-store" });
      if (response.status === 401) {
        askForCredentials(response.headers.get("WWW-Authenticate") || "");
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      await readEvents(response.body, (name, data) => {
        if (name === "ready") {
          setConnection("live", "Live");
          delay = 1000;
          loadTasks().catch(report); // after subscribing: nothing falls between the two
        } else if (name === "task") {
          onUpdate(JSON.parse(data));
        } else if (name === "resync") {
          loadTasks().catch(report);
        }
      });
    } catch (error) {
      if (error instanceof AuthNeeded) return;
    }
    setConnection("offline", "Reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 10000); // "ready" reads the list again: updates were missed
  }
}

async function readEvents(body, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let name = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) dispatch(name || "message", data.join("\n"));
        name = "";
        data = [];
      } else if (line.startsWith(":")) {
        // a comment (ping)
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = text;
        else if (field === "data") data.push(text);
      }
    }
  }
}

function report(error) {
  if (error instanceof AuthNeeded) return;
  $("task-caption").textContent = `Could not load: ${error.message}`;
}

function start() {
  $("forget").hidden = !credentials();
  follow();
  const wanted = /(?:^#|&)task=([^&]+)/.exec(location.hash);
  if (wanted) select(decodeURIComponent(wanted[1])).catch(report);
}

start();
