"use strict";
// The pairing section (v1.md "Pairing"): a mod's request to connect, on whichever tab is open,
// with Allow / Deny; the paired mods on the settings tab (one row per install), each with Revoke. Its own file: the
// page session and its API calls are app.js's (window.XTY_PAGE), the texts are i18n.js's.
(() => {
  const $ = (id) => document.getElementById(id);
  const lang = () => (localStorage.getItem("xty-lang") === "en" ? "en" : "zh");
  const T = () => window.XTY_TEXTS[lang()];
  const P = () => T().pairing;
  const POLL_MS = 2000;

  const el = (...args) => window.XTY_PAGE.el(...args);
  // app.js's call(): no page session yet answers "no session", which app.js explains.
  const call = (...args) => window.XTY_PAGE.call(...args);

  const at = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString(lang() === "zh" ? "zh-CN" : "en-GB") : "-");
  const game = (id) => T().gameName[id] || id;

  async function act(name, body) {
    try { render(await call("POST", name, body)); } catch (e) { $("status").textContent = T().failed + e.message; }
  }

  // Any local process may ask under any mod's name, so no request is shown under its name
  // until the player types the code the game shows: codes are unique among waiting requests,
  // so the typed code picks the real mod's request and never a squatter's.
  let pending = [];

  function codeInput() {
    let input = $("pair-code");
    if (!input) {
      input = el("input", { id: "pair-code", inputmode: "numeric", maxlength: "4", autocomplete: "off", "aria-labelledby": "pair-ask" });
      input.addEventListener("input", () => showMatch());
    }
    return input;
  }

  function showMatch() {
    const p = P();
    const typed = codeInput().value.trim();
    const r = pending.find((x) => x.code === typed);
    const match = $("pair-match");
    if (!match) return;
    if (!r) {
      match.replaceChildren(...(typed.length === 4 ? [el("p", { class: "pair-nomatch" }, p.noMatch)] : []));
      return;
    }
    match.replaceChildren(el("div", { class: "pair-request", "data-request": r.id },
      el("p", {}, p.request(game(r.gameId), r.adapter, r.code)),
      // Allowing adds a key beside another install's, or replaces this install's old one.
      ...(p.pairedBefore[r.pairedBefore] ? [el("p", { class: "note pair-before" }, p.pairedBefore[r.pairedBefore])] : []),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "pair-allow", onclick: () => decide(r.id, true) }, p.allow),
        el("button", { type: "button", class: "pair-deny delete", onclick: () => decide(r.id, false) }, p.deny))));
  }

  function decide(requestId, allow) {
    codeInput().value = "";
    act("pair", { requestId, allow });
  }

  function render(view) {
    if (!view) return;
    const p = P();
    pending = view.pending;
    const requests = $("pair-requests");
    requests.hidden = !pending.length;
    const input = codeInput();
    if (!pending.length) input.value = "";
    if (!$("pair-match") || requests.dataset.lang !== lang()) {
      requests.dataset.lang = lang();
      requests.replaceChildren(el("p", { id: "pair-ask", class: "pair-ask" }, p.ask), input, el("div", { id: "pair-match" }));
    }
    showMatch();
    $("paired-title").textContent = p.title;
    const row = (cells, head) => el("tr", {}, ...cells.map((c) => el(head ? "th" : "td", {}, c)));
    $("paired-keys").replaceChildren(row(p.cols, true), ...(view.keys.length
      ? view.keys.map((k) => el("tr", { "data-paired-key": k.id }, el("td", {}, k.adapter + (k.install ? p.install(k.install) : "")),
        el("td", {}, game(k.gameId)), el("td", {}, at(k.pairedAt)), el("td", {}, k.inUse ? p.inUse : at(k.lastUsed)),
        el("td", {}, el("button", { type: "button", class: "pair-revoke delete", onclick: () => act("revoke", { keyId: k.id }) }, p.revoke))))
      : [row([p.none, "", "", "", ""])]));
    // Stacked on a phone like the statistics (app.css table.stack): each cell says its column.
    $("paired-keys").classList.add("stack");
    for (const line of [...$("paired-keys").rows].slice(1)) [...line.cells].forEach((c, i) => { c.dataset.label = p.cols[i]; });
    // Several installs of one mod (each its own key, v1.md "Keys per install"): say what revoking one does.
    const installs = $("paired-installs");
    if (installs) {
      installs.hidden = !view.keys.some((k) => k.install);
      installs.textContent = p.installs;
    }
    document.body.dataset.pairing = String(view.pending.length);
    const now = view.connected || [];
    $("connected").textContent = now.length
      ? p.connected(now.map((c) => (c.saveName ? p.gameSave(game(c.gameId), c.saveName) : game(c.gameId))))
      : p.noneConnected;
    document.body.dataset.connected = String(now.length);
  }

  // Only once app.js has a page session and has drawn a tab (never "locked").
  const open = () => !!document.body.dataset.ready && document.body.dataset.ready !== "locked";

  // A session that ended is not asked again every 2 s (each would be one refused request in
  // the server's log): the page says so once and waits for a new link.
  async function poll() {
    if (open()) {
      try { render(await call("GET", "pairing")); } catch (e) {
        if (e.kind === "session") {
          $("status").textContent = e.message;
          $("status").className = "bad";
          document.body.dataset.ready = "locked";
        }
      }
    }
    setTimeout(poll, POLL_MS);
  }

  window.addEventListener("DOMContentLoaded", () => {
    $("lang").addEventListener("click", () => setTimeout(() => open() && call("GET", "pairing").then(render, () => {}), 0));
    poll();
  });
})();
