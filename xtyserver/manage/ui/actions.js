"use strict";
// The actions tab (v1.md "Actions"): each game's switch (every action, look only, none) and the
// action log, newest first. Its own file: app.js draws it on its tab (window.XTY_ACTIONS.render),
// the page session and its API calls are app.js's (window.XTY_PAGE), the texts i18n.js's.
// Every text from a game goes through textContent (el), never HTML.
(() => {
  const $ = (id) => document.getElementById(id);
  const lang = () => (localStorage.getItem("xty-lang") === "en" ? "en" : "zh");
  const T = () => window.XTY_TEXTS[lang()];
  const A = () => T().actions;
  const el = (...args) => window.XTY_PAGE.el(...args);
  const call = (...args) => window.XTY_PAGE.call(...args);
  const say = (...args) => window.XTY_PAGE.say(...args);
  const game = (id) => T().gameName[id] || id;
  const at = (seconds) => new Date(seconds * 1000).toLocaleString(lang() === "zh" ? "zh-CN" : "en-GB");
  const paren = (text) => (lang() === "zh" ? `（${text}）` : ` (${text})`);
  const row = (cells, head) => el("tr", {}, ...cells.map((c) => el(head ? "th" : "td", {}, c)));

  async function setMode(gameId, mode) {
    try {
      draw(await call("POST", "actions", { gameId, mode }));
      say(A().modeSaved(game(gameId), A().mode[mode]));
    } catch (e) { say(e.kind ? e.message : T().failed + e.message, true); }
  }

  function modeSelect(g) {
    const select = el("select", { "data-game": g.gameId, "aria-label": `${game(g.gameId)}: ${A().modeCols[2]}`,
      onchange: (e) => setMode(g.gameId, e.target.value) },
      ...["all", "look", "off"].map((m) => el("option", { value: m }, A().mode[m])));
    select.value = g.mode;
    return select;
  }

  function offered(specs) {
    if (!specs) return A().notConnected;
    const en = lang() === "en";
    return specs.map((s) => ((en && s.descriptionEn) || s.description) + paren(A().risk[s.risk])).join(lang() === "zh" ? "、" : "; ");
  }

  function happened(r) {
    const a = A();
    if (r.event === "result") return a.status[r.status] || r.status;
    if (r.event === "late") return `${a.event.late}${T().colon}${a.status[r.status] || r.status}`;
    if (r.event === "refused") return `${a.event.refused}${T().colon}${a.reason[r.reason] || r.reason}`;
    const what = a.event[r.event] || r.event;
    return r.confirmed ? what + paren(a.confirmed) : what;
  }

  function details(r) {
    const args = Object.entries(r.args || {}).map(([k, v]) => `${k}=${v}`).join(", ");
    return [args, r.text].filter(Boolean).join(" · ");
  }

  function draw(view) {
    const a = A();
    $("action-modes").replaceChildren(row(a.modeCols, true), ...(view.games.length
      ? view.games.map((g) => el("tr", { "data-action-game": g.gameId },
        el("td", {}, game(g.gameId)), el("td", {}, offered(view.declared[g.gameId])), el("td", {}, modeSelect(g))))
      : [row([a.noGames, "", ""])]));
    $("action-log").replaceChildren(row(a.logCols, true), ...(view.log.length
      ? view.log.map((r) => el("tr", { "data-action-event": r.event },
        el("td", {}, at(r.at)), el("td", {}, game(r.gameId)), el("td", {}, r.name), el("td", {}, happened(r)), el("td", {}, details(r))))
      : [row([a.noLog, "", "", "", ""])]));
  }

  window.XTY_ACTIONS = { render: async () => draw(await call("GET", "actions")) };
})();
