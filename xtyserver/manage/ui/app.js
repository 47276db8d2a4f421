"use strict";
// The memory page. Every text from the store goes through textContent, never HTML.
(() => {
  let FIELDS = [];  // the profile's editable fields, in the server's order (its one field table)
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

  // GET reads; POST sends its arguments as a JSON body (the shapes of v1.md's memory frames).
  async function call(method, name, body) {
    const headers = csrf ? { "X-XTY-CSRF": csrf } : {};
    const init = { method, headers, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch("api/" + name, init);
    const answer = await r.json();
    if (!r.ok) throw new Error(answer.error || String(r.status));
    return answer.result;
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
  // Every time from the server is RFC 3339 (2026-06-01T12:00:00Z).
  const when = (iso) => (iso ? new Date(iso).toLocaleString(lang === "zh" ? "zh-CN" : "en-GB") : "-");
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
        const next = Array.isArray(value) ? raw.split(/[,，、\n]/).map((s) => s.trim()).filter(Boolean) : raw;
        try {
          await call("POST", "profile", { field: name, value: next });
          say(T().saved);
          await refresh();
        } catch (e) { say(T().failed + e.message, true); }
      } }, T().save);
      valueCell.replaceChildren(input, save);
      input.focus();
    } }, T().edit);
    const del = el("button", { type: "button", class: "delete", onclick: () => clearField(name, value) }, T().delete);
    row.append(el("td", { class: "actions" }, edit, del));
    return row;
  }

  function eventItem(game, save, ev) {
    const pin = el("button", { type: "button", class: "pin", onclick: async () => {
      try {
        await call("POST", "pin", { gameId: game, saveId: save, eventId: ev.id, pinned: !ev.pinned });
        await refresh();
      } catch (e) { say(T().failed + e.message, true); }
    } }, ev.pinned ? T().unpin : T().pin);
    const del = el("button", { type: "button", class: "delete", onclick: () => preview({ target: "item", gameId: game, saveId: save, eventId: ev.id }) }, T().delete);
    return el("li", { class: "event" + (ev.pinned ? " pinned" : ""), "data-event-id": String(ev.id) },
      el("span", { class: "kind" }, T().kind[ev.kind] || ev.kind),
      el("span", { class: "subject" }, ev.subject),
      el("span", { class: "summary" }, ev.summary),
      el("span", { class: "tags" }, ...(ev.searchKeys || []).map((k) => el("span", { class: "tag" }, k))),
      el("span", { class: "status status-" + ev.status }, T().status[ev.status] || ev.status),
      el("span", { class: "importance" }, "★".repeat(ev.importance)),
      el("time", {}, when(ev.updatedAt)),
      el("span", { class: "actions" }, pin, del));
  }

  function statLine(s) {
    return s ? `${T().days} ${s.days} · ${T().sessions} ${s.sessions} · ${T().active} ${hm(s.activeMs)} · ${T().last} ${when(s.lastPlayed)}` : "";
  }

  // Pinned first, then the newest (RFC 3339 strings in UTC sort as times).
  const order = (a, b) => (b.pinned - a.pinned) || (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);

  function renderMemory(view) {
    const p = view.profile;
    $("auto-shared").checked = !!p.autoShared;
    FIELDS = Object.keys(p).filter((f) => f !== "autoShared");
    $("profile").replaceChildren(...FIELDS.map((f) => profileRow(f, p[f])));
    const gameStats = new Map(view.stats.games.map((g) => [g.gameId, g]));
    const saveStats = new Map(view.stats.saves.map((s) => [s.gameId + "/" + s.saveId, s]));
    const byGame = new Map();
    for (const s of view.saves) {
      if (!byGame.has(s.gameId)) byGame.set(s.gameId, []);
      byGame.get(s.gameId).push(s);
    }
    const games = [...byGame.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([gameId, saves]) => el("article", { class: "game", "data-game": gameId },
      el("div", { class: "game-head" },
        el("h3", {}, gameId),
        el("span", { class: "stat" }, statLine(gameStats.get(gameId))),
        el("button", { type: "button", class: "delete clear-game", onclick: () => preview({ target: "game", gameId }) }, T().clearGame)),
      ...saves.map((s) => el("section", { class: "save", "data-save": s.saveId },
        el("div", { class: "save-head" },
          el("h4", {}, s.saveName || s.saveId),
          el("span", { class: "noname" }, s.saveName ? "" : T().noName),
          el("span", { class: "stat" }, statLine(saveStats.get(gameId + "/" + s.saveId))),
          el("button", { type: "button", class: "delete clear-save", onclick: () => preview({ target: "save", gameId, saveId: s.saveId }) }, T().clearSave)),
        s.events.length ? el("ul", { class: "events" }, ...[...s.events].sort(order).map((ev) => eventItem(gameId, s.saveId, ev)))
          : el("p", { class: "empty" }, T().noEvents)))));
    $("games").replaceChildren(...(games.length ? games : [el("p", { class: "empty" }, T().noGames)]));
  }

  // Step one of a forget: the server's memory.preview (what would go, and a confirmToken).
  async function preview(target) {
    let answer;
    try {
      answer = await call("POST", "forget", target);
    } catch (e) { say(T().failed + e.message, true); return; }
    pendingForget = { target, token: answer.confirmToken };
    const items = answer.saves.flatMap((s) => s.events.map((ev) => `${s.gameId} / ${s.saveName || s.saveId}: ${ev.summary}`));
    $("confirm-body").replaceChildren(el("p", {}, `${T().willDelete} ${answer.itemCount} ${T().items}`),
      el("ul", { class: "preview-events" }, ...items.map((text) => el("li", {}, text))));
    $("confirm").showModal();
  }

  // A shared field is cleared by correcting it to empty; the dialog shows what goes.
  function clearField(name, value) {
    pendingForget = { field: name, value: Array.isArray(value) ? [] : "" };
    $("confirm-body").replaceChildren(el("p", {}, T().willReset),
      el("p", { class: "preview-field" }, `${T().field[name] || name}: ${shown(value)}`));
    $("confirm").showModal();
  }

  // Step two: the same target with its confirmToken (single-use, this page session, 2 minutes).
  async function confirmForget() {
    const pending = pendingForget;
    pendingForget = null;
    $("confirm").close();
    if (!pending) return;
    try {
      if (pending.field) await call("POST", "profile", { field: pending.field, value: pending.value });
      else await call("POST", "forget", { ...pending.target, confirmToken: pending.token });
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

  // Token use per local date (every save and purpose), newest first.
  function tokenDays(rows) {
    const days = new Map();
    for (const r of rows) {
      const d = days.get(r.date) || { date: r.date, calls: 0, promptTokens: 0, completionTokens: 0 };
      d.calls += r.calls;
      d.promptTokens += r.promptTokens;
      d.completionTokens += r.completionTokens;
      days.set(r.date, d);
    }
    return [...days.values()].sort((a, b) => (a.date < b.date ? 1 : -1));
  }

  function renderStats(view) {
    const stats = { ...view.stats, daily: view.daily, until: view.until, days: view.days };
    const t = T();
    $("stats-games").replaceChildren(row([t.game, t.days, t.sessions, t.active, t.last], true),
      ...stats.games.map((g) => row([g.gameId, String(g.days), String(g.sessions), hm(g.activeMs), when(g.lastPlayed)])));
    $("stats-saves").replaceChildren(row([t.game, t.saveCol, t.days, t.sessions, t.active, t.last], true),
      ...stats.saves.map((s) => row([s.gameId, s.saveName || s.saveId, String(s.days), String(s.sessions), hm(s.activeMs), when(s.lastPlayed)])));
    const tokens = tokenDays(stats.tokens || []);
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
    const view = await call("GET", "view");  // one store snapshot for either tab
    if (tab === "memory") renderMemory(view);
    else renderStats(view);
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
        await call("POST", "profile", { field: "autoShared", value: e.target.checked });
        say(T().saved);
      } catch (err) { say(T().failed + err.message, true); }
    });
    if (!(await openSession())) { say(T().needLink, true); document.body.dataset.ready = "locked"; return; }
    await show("memory");
  }

  start();
})();
