"use strict";
// The memory page. Every text from the store goes through textContent, never HTML.
(() => {
  const LIST_FIELDS = ["personality", "hobbies", "games", "notes"];
  const FIELDS = ["nickname", "language", "replyStyle", "personality", "hobbies", "games",
    "companionName", "companionPersona", "notes"];
  const SVG = "http://www.w3.org/2000/svg";
  let lang = localStorage.getItem("xty-lang") === "en" ? "en" : "zh";
  let csrf = null;
  let pendingForget = null;
  let tab = "memory";
  const T = () => window.XTY_TEXTS[lang];
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }

  function say(text, bad) {
    const s = $("status");
    s.textContent = text;
    s.className = bad ? "bad" : "";
  }

  async function call(method, name, params) {
    const query = params ? "?" + new URLSearchParams(params).toString() : "";
    const headers = csrf ? { "X-XTY-CSRF": csrf } : {};
    const r = await fetch("api/" + name + query, { method, headers, credentials: "same-origin", cache: "no-store" });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || String(r.status));
    return body.result;
  }

  async function openSession() {
    const match = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (match) {
      history.replaceState(null, "", location.pathname);  // the key leaves the address bar
      const r = await fetch("api/session", { method: "POST", headers: { "X-XTY-Launch": match[1] }, credentials: "same-origin" });
      if (r.ok) sessionStorage.setItem("xty-csrf", (await r.json()).csrf);
    }
    csrf = sessionStorage.getItem("xty-csrf");  // this tab only; the cookie alone opens nothing
    return !!csrf;
  }

  function hm(ms) {
    const minutes = Math.floor(ms / 60000);
    return T().hours(Math.floor(minutes / 60), minutes % 60);
  }
  const when = (sec) => (sec ? new Date(sec * 1000).toLocaleString(lang === "zh" ? "zh-CN" : "en-GB") : "-");
  const shown = (v) => (Array.isArray(v) ? v.join("、") : String(v ?? "")) || T().empty;

  function applyTexts() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.title = T().title;
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = T()[node.dataset.i18n];
    $("lang").textContent = T().switchLang;
  }

  // -- memory view ---------------------------------------------------------------------------

  function profileRow(name, value) {
    const valueCell = el("td", { class: "value" }, shown(value));
    const row = el("tr", { "data-field": name }, el("th", {}, T().field[name]), valueCell);
    const edit = el("button", { type: "button", class: "edit", onclick: () => {
      const input = el("input", { type: "text", class: "field-input" });
      input.value = Array.isArray(value) ? value.join(", ") : (value || "");
      const save = el("button", { type: "button", class: "save", onclick: async () => {
        const raw = input.value.trim();
        const next = LIST_FIELDS.includes(name) ? raw.split(/[,，、\n]/).map((s) => s.trim()).filter(Boolean) : raw;
        try {
          await call("POST", "shared", { field: name, value: JSON.stringify(next) });
          say(T().saved);
          await refresh();
        } catch (e) { say(T().failed + e.message, true); }
      } }, T().save);
      valueCell.replaceChildren(input, save);
      input.focus();
    } }, T().edit);
    const del = el("button", { type: "button", class: "delete", onclick: () => preview({ kind: "shared_field", field: name }) }, T().delete);
    row.append(el("td", { class: "actions" }, edit, del));
    return row;
  }

  function eventItem(game, save, ev) {
    const pin = el("button", { type: "button", class: "pin", onclick: async () => {
      try {
        await call("POST", "pin", { gameId: game, saveId: save, id: ev.id, pinned: String(!ev.pinned) });
        await refresh();
      } catch (e) { say(T().failed + e.message, true); }
    } }, ev.pinned ? T().unpin : T().pin);
    const del = el("button", { type: "button", class: "delete", onclick: () => preview({ kind: "event", gameId: game, saveId: save, eventId: ev.id }) }, T().delete);
    return el("li", { class: "event" + (ev.pinned ? " pinned" : ""), "data-event-id": String(ev.id) },
      el("span", { class: "kind" }, T().kind[ev.kind] || ev.kind),
      el("span", { class: "subject" }, ev.subject),
      el("span", { class: "summary" }, ev.summary),
      el("span", { class: "status status-" + ev.status }, T().status[ev.status] || ev.status),
      el("span", { class: "importance" }, "★".repeat(ev.importance)),
      el("time", {}, when(ev.updatedAt)),
      el("span", { class: "actions" }, pin, del));
  }

  function statLine(s) {
    return s ? `${T().days} ${s.days} · ${T().sessions} ${s.sessions} · ${T().active} ${hm(s.activeMs)} · ${T().last} ${when(s.lastPlayed)}` : "";
  }

  function renderMemory(overview) {
    const p = overview.profile;
    $("auto-shared").checked = !!p.autoShared;
    $("profile").replaceChildren(...FIELDS.map((f) => profileRow(f, p[f])));
    const games = overview.games.map((g) => el("article", { class: "game", "data-game": g.gameId },
      el("div", { class: "game-head" },
        el("h3", {}, g.gameId),
        el("span", { class: "stat" }, statLine(g.stats)),
        el("button", { type: "button", class: "delete clear-game", onclick: () => preview({ kind: "game", gameId: g.gameId }) }, T().clearGame)),
      ...g.saves.map((s) => el("section", { class: "save", "data-save": s.saveId },
        el("div", { class: "save-head" },
          el("h4", {}, s.name || s.saveId),
          el("span", { class: "noname" }, s.name ? "" : T().noName),
          el("span", { class: "stat" }, statLine(s.stats)),
          el("button", { type: "button", class: "delete clear-save", onclick: () => preview({ kind: "save", gameId: g.gameId, saveId: s.saveId }) }, T().clearSave)),
        s.events.length ? el("ul", { class: "events" }, ...s.events.map((ev) => eventItem(g.gameId, s.saveId, ev)))
          : el("p", { class: "empty" }, T().noEvents)))));
    $("games").replaceChildren(...(games.length ? games : [el("p", { class: "empty" }, T().noGames)]));
  }

  async function preview(target) {
    try {
      pendingForget = await call("POST", "forget/preview", target);
    } catch (e) { say(T().failed + e.message, true); return; }
    const body = $("confirm-body");
    if (pendingForget.field) {
      body.replaceChildren(el("p", {}, T().willReset),
        el("p", { class: "preview-field" }, `${T().field[target.field] || target.field}: ${shown(pendingForget.value)}`));
    } else {
      body.replaceChildren(el("p", {}, `${T().willDelete} ${pendingForget.events.length} ${T().items}`),
        el("ul", { class: "preview-events" }, ...pendingForget.events.map((ev) => el("li", {}, `${ev.gameId} / ${ev.saveId}: ${ev.summary}`))));
    }
    $("confirm").showModal();
  }

  async function confirmForget() {
    const token = pendingForget && pendingForget.token;
    pendingForget = null;
    $("confirm").close();
    if (!token) return;
    try {
      await call("POST", "forget/confirm", { token });
      say(T().deleted);
      await refresh();
    } catch (e) { say(T().failed + e.message, true); }
  }

  // -- statistics view ---------------------------------------------------------------------

  function row(cells, head) {
    return el("tr", {}, ...cells.map((c) => el(head ? "th" : "td", {}, c)));
  }

  function chart(gameId, days, until, count) {
    const end = new Date(until + "T00:00:00Z");
    const dates = [];
    for (let i = count - 1; i >= 0; i--) dates.push(new Date(end.getTime() - i * 86400000).toISOString().slice(0, 10));
    const byDate = new Map(days.map((d) => [d.date, d.activeMs]));
    const most = Math.max(60000, ...days.map((d) => d.activeMs));
    const w = 30, h = 110, svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "chart");
    svg.setAttribute("data-game", gameId);
    svg.setAttribute("viewBox", `0 0 ${dates.length * w} ${h + 16}`);
    svg.setAttribute("role", "img");
    dates.forEach((date, i) => {
      if (!byDate.has(date)) return;
      const ms = byDate.get(date);
      const bar = document.createElementNS(SVG, "rect");
      const height = Math.max(3, Math.round((ms / most) * h));
      bar.setAttribute("class", "bar");
      bar.setAttribute("data-date", date);
      bar.setAttribute("data-active-ms", String(ms));
      bar.setAttribute("x", String(i * w + 4));
      bar.setAttribute("y", String(h - height));
      bar.setAttribute("width", String(w - 8));
      bar.setAttribute("height", String(height));
      const tip = document.createElementNS(SVG, "title");
      tip.textContent = `${date}: ${hm(ms)}`;
      bar.append(tip);
      svg.append(bar);
    });
    for (const i of [0, dates.length - 1]) {
      const label = document.createElementNS(SVG, "text");
      label.setAttribute("x", String(i * w + (i ? w : 0)));
      label.setAttribute("y", String(h + 13));
      label.setAttribute("text-anchor", i ? "end" : "start");
      label.textContent = dates[i].slice(5);
      svg.append(label);
    }
    return svg;
  }

  function renderStats(stats) {
    const t = T();
    $("stats-games").replaceChildren(row([t.game, t.days, t.sessions, t.active, t.last], true),
      ...stats.games.map((g) => row([g.gameId, String(g.days), String(g.sessions), hm(g.activeMs), when(g.lastPlayed)])));
    $("stats-saves").replaceChildren(row([t.game, t.saveCol, t.days, t.sessions, t.active, t.last], true),
      ...stats.saves.map((s) => row([s.gameId, s.saveId, String(s.days), String(s.sessions), hm(s.activeMs), when(s.lastPlayed)])));
    const tokens = stats.tokens || [];
    $("stats-tokens").replaceChildren(row([t.date, t.calls, t.promptTokens, t.completionTokens], true),
      ...(tokens.length ? tokens.map((d) => row([d.date, String(d.calls), String(d.promptTokens), String(d.completionTokens)]))
        : [row([t.noTokens, "", "", ""])]));
    $("charts").replaceChildren(...stats.games.map((g) => el("figure", { class: "chart-box" },
      el("figcaption", {}, g.gameId),
      chart(g.gameId, stats.daily.filter((d) => d.gameId === g.gameId), stats.until, stats.days))));
  }

  // -- wiring ------------------------------------------------------------------------------

  async function refresh() {
    applyTexts();
    if (tab === "memory") renderMemory(await call("GET", "view"));
    else renderStats(await call("GET", "stats"));
    $("memory-view").hidden = tab !== "memory";
    $("stats-view").hidden = tab !== "stats";
    $("tab-memory").classList.toggle("active", tab === "memory");
    $("tab-stats").classList.toggle("active", tab === "stats");
    document.body.dataset.ready = tab;
  }

  async function show(next) {
    tab = next;
    delete document.body.dataset.ready;
    try { await refresh(); } catch (e) {
      if (e.message === "no session") { say(T().needLink, true); document.body.dataset.ready = "locked"; }
      else say(T().failed + e.message, true);
    }
  }

  async function start() {
    applyTexts();
    $("tab-memory").addEventListener("click", () => show("memory"));
    $("tab-stats").addEventListener("click", () => show("stats"));
    $("lang").addEventListener("click", () => {
      lang = lang === "zh" ? "en" : "zh";
      localStorage.setItem("xty-lang", lang);
      say("");
      show(tab);
    });
    $("confirm-yes").addEventListener("click", confirmForget);
    $("confirm-no").addEventListener("click", () => { pendingForget = null; $("confirm").close(); });
    $("auto-shared").addEventListener("change", async (e) => {
      try {
        await call("POST", "auto-shared", { on: String(e.target.checked) });
        say(T().saved);
      } catch (err) { say(T().failed + err.message, true); }
    });
    if (!(await openSession())) { say(T().needLink, true); document.body.dataset.ready = "locked"; return; }
    await show("memory");
  }

  start();
})();
