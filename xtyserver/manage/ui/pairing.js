"use strict";
// The pairing section (v1.md "Pairing"): a mod's request to connect, on whichever tab is open,
// with Allow / Deny; the paired mods on the settings tab, each with Revoke. Its own file: the
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

  function render(view) {
    if (!view) return;
    const p = P();
    const requests = $("pair-requests");
    requests.hidden = !view.pending.length;
    requests.replaceChildren(...view.pending.map((r) => el("div", { class: "pair-request", "data-request": r.id },
      el("p", {}, p.request(game(r.gameId), r.adapter, r.code)),
      el("div", { class: "actions" },
        el("button", { type: "button", class: "pair-allow", onclick: () => act("pair", { requestId: r.id, allow: true }) }, p.allow),
        el("button", { type: "button", class: "pair-deny delete", onclick: () => act("pair", { requestId: r.id, allow: false }) }, p.deny)))));
    $("paired-title").textContent = p.title;
    const row = (cells, head) => el("tr", {}, ...cells.map((c) => el(head ? "th" : "td", {}, c)));
    $("paired-keys").replaceChildren(row(p.cols, true), ...(view.keys.length
      ? view.keys.map((k) => el("tr", { "data-paired-key": k.id }, el("td", {}, k.adapter), el("td", {}, game(k.gameId)),
        el("td", {}, at(k.pairedAt)), el("td", {}, at(k.lastUsed)),
        el("td", {}, el("button", { type: "button", class: "pair-revoke delete", onclick: () => act("revoke", { keyId: k.id }) }, p.revoke))))
      : [row([p.none, "", "", "", ""])]));
    document.body.dataset.pairing = String(view.pending.length);
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
