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
    let r, answer;
    try {
      r = await fetch("api/" + name, init);
      answer = await r.json();
    } catch (e) { throw failure("gone", T().serverGone); }  // stopped, or restarting
    if (r.ok) return answer.result;
    if (r.status === 401 || answer.error === "csrf token missing or wrong") throw failure("session", T().sessionEnded);
    if (answer.code === "os_error") throw failure("os", T().osError(answer.detail));
    if (answer.code && T().refused[answer.code]) throw failure("refused", T().refused[answer.code], answer.fields);
    if (answer.code === "internal") throw failure("internal", T().internalError);
    throw failure("refused", T().failed + (answer.error || String(r.status)));
  }

  window.XTY_PAGE = { call, el };  // for pairing.js: one session, one way to call the API


  // An error whose message is already in the page's language and says what to do.
  function failure(kind, text, fields) {
    const e = new Error(text);
    e.kind = kind;
    e.fields = fields || [];
    return e;
  }
  const shownError = (e) => (e.kind ? e.message : T().failed + e.message);

  // What keeps the page from opening ("" when it opened). The hand-off file's form opened this page with its session (POST /ui/open, the key in
  // no URL): the session's CSRF token is in the page itself. A printed link carries the key
  // in the fragment instead, traded here.
  async function openSession() {
    const handed = document.querySelector('meta[name="xty-session"]');
    if (handed && handed.content) {
      sessionStorage.setItem("xty-csrf", handed.content);
      handed.content = "";
      history.replaceState(null, "", "./");  // a reload asks for the page, not the used form
    }
    const match = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (match) {
      history.replaceState(null, "", location.pathname);  // the key leaves the address bar
      let r = null;
      try {
        r = await fetch("api/session", { method: "POST", headers: { "X-XTY-Launch": match[1] }, credentials: "same-origin" });
      } catch (e) { return T().serverGone; }
      if (r.ok) sessionStorage.setItem("xty-csrf", (await r.json()).csrf);
      else return T().keyUsed;
    }
    csrf = sessionStorage.getItem("xty-csrf");  // this tab only; the cookie alone opens nothing
    return csrf ? "" : T().needLink;
  }

  function hm(ms) {
    const minutes = Math.floor(ms / 60000);
    return T().hours(Math.floor(minutes / 60), minutes % 60);
  }
  // Every time from the server is RFC 3339 (2026-06-01T12:00:00Z); shown as 2026-06-01 20:00
  // in this PC's zone (the one the page opens in, where the server and the mod run), the
  // zone the play days are counted in; the statistics tab names it.
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const clock = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  function when(iso) {
    if (!iso) return "-";
    const part = Object.fromEntries(clock.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
    return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
  }
  const shown = (v) => (Array.isArray(v) ? v.join("、") : String(v ?? "")) || T().empty;

  function applyTexts() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.title = T().title;
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = T()[node.dataset.i18n];
    for (const node of document.querySelectorAll("[data-i18n-aria]")) node.setAttribute("aria-label", T()[node.dataset.i18nAria]);
    for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = T()[node.dataset.i18nPlaceholder];
    $("lang").textContent = T().switchLang;
    $("lang").setAttribute("lang", lang === "zh" ? "en" : "zh-CN");
    $("lang").setAttribute("aria-label", T().switchLangLabel);
  }

  // -- readable names ------------------------------------------------------------------------

  let saveNames = new Map();  // "gameId/saveId" -> the save's readable name (from the memory and the statistics)
  const key = (gameId, saveId) => gameId + "/" + saveId;  // neither id can hold a "/"
  const gameLabel = (gameId) => T().gameName[gameId] || gameId;
  // The save's name; "未命名存档 · 5e7196" (a short id) only when the game never sent one.
  function saveLabel(gameId, saveId, name) {
    const known = name || saveNames.get(key(gameId, saveId));
    return known || `${T().unnamed} · ${saveId.slice(0, 6)}`;
  }
  function learnNames(view) {
    saveNames = new Map();
    for (const s of view.stats.saves) if (s.saveName) saveNames.set(key(s.gameId, s.saveId), s.saveName);
    for (const s of view.saves) if (s.saveName) saveNames.set(key(s.gameId, s.saveId), s.saveName);
  }

  // -- memory view ---------------------------------------------------------------------------

  function profileRow(name, value) {
    const label = T().field[name] || name;
    const valueCell = el("td", { class: "value" }, shown(value));
    const row = el("tr", { "data-field": name }, el("th", { scope: "row" }, label), valueCell);
    const edit = el("button", { type: "button", class: "edit", "aria-label": `${T().edit}${T().colon}${label}`, onclick: () => {
      const input = el("input", { type: "text", class: "field-input", "aria-label": label });
      input.value = Array.isArray(value) ? value.join(", ") : (value || "");
      const save = el("button", { type: "button", class: "save", "aria-label": `${T().save}${T().colon}${label}`, onclick: async () => {
        const raw = input.value.trim();
        const next = Array.isArray(value) ? raw.split(/[,，、\n]/).map((s) => s.trim()).filter(Boolean) : raw;
        try {
          await call("POST", "profile", { field: name, value: next });
          say(T().saved);
          await refresh();
        } catch (e) { say(shownError(e), true); }
      } }, T().save);
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") save.click(); });
      valueCell.replaceChildren(input, save);
      input.focus();
    } }, T().edit);
    const del = el("button", { type: "button", class: "delete", "aria-label": `${T().delete}${T().colon}${label}`, onclick: () => clearField(name, value) }, T().delete);
    row.append(el("td", { class: "actions" }, edit, del));
    return row;
  }

  // The empty fields, behind one control: pick one, and its row opens for typing.
  function addFieldRow(empty, p) {
    const t = T();
    const pick = el("select", { id: "add-field", "aria-label": t.addField }, ...empty.map((f) => el("option", { value: f }, t.field[f] || f)));
    const add = el("button", { type: "button", id: "add-field-go", class: "edit", onclick: () => {
      const row = profileRow(pick.value, p[pick.value]);
      $("add-row").replaceWith(row);
      row.querySelector("button.edit").click();
    } }, t.add);
    return el("tr", { id: "add-row", class: "add" }, el("th", { scope: "row" }, t.addField),
      el("td", { class: "value", colspan: "2" }, pick, " ", add));
  }

  function eventItem(game, save, ev) {
    const pin = el("button", { type: "button", class: "pin", "aria-pressed": String(!!ev.pinned), "aria-label": `${T().pin}${T().colon}${ev.subject}`, onclick: async () => {
      try {
        await call("POST", "pin", { gameId: game, saveId: save, eventId: ev.id, pinned: !ev.pinned });
        await refresh();
        say(ev.pinned ? T().unpinnedOne(ev.subject) : T().pinnedOne(ev.subject));
      } catch (e) { say(shownError(e), true); }
    } }, ev.pinned ? T().unpin : T().pin);
    const del = el("button", { type: "button", class: "delete", "aria-label": `${T().delete}${T().colon}${ev.subject}`, onclick: () => preview({ target: "item", gameId: game, saveId: save, eventId: ev.id }) }, T().delete);
    const meta = el("div", { class: "meta" },
      el("span", { class: "kind" }, T().kind[ev.kind] || ev.kind),
      el("span", { class: "subject" }, ev.subject),
      el("span", { class: "status status-" + ev.status }, T().status[ev.status] || ev.status),
      el("span", { class: "importance", "aria-label": `★ ${ev.importance}/5` }, "★".repeat(ev.importance)));
    if (ev.day !== null && ev.day !== undefined) meta.append(el("span", { class: "day" }, T().day(ev.day)));
    meta.append(el("time", { datetime: ev.updatedAt }, when(ev.updatedAt)));
    return el("li", { class: "event" + (ev.pinned ? " pinned" : ""), "data-event-id": String(ev.id) },
      meta, el("span", { class: "summary" }, ev.summary),
      el("span", { class: "tags" }, ...(ev.searchKeys || []).map((k) => el("span", { class: "tag" }, k))),
      el("span", { class: "actions" }, pin, del));
  }

  // The player's own names for things on one save, each deletable (saying it again brings it back).
  function nameList(gameId, saveId, names) {
    const t = T();
    return el("div", { class: "names" },
      el("h5", {}, t.names),
      el("ul", { class: "names", "aria-label": t.names }, ...names.map((n) => el("li", { class: "name", "data-name-id": String(n.id) },
        el("span", { class: "alias" }, n.name), " → ", el("span", { class: "means" }, n.means), " ",
        el("button", { type: "button", class: "delete forget-name", "aria-label": `${t.delete}${t.colon}${n.name}`, onclick: async () => {
          try {
            await call("POST", "forget-name", { gameId, saveId, nameId: n.id });
            await refresh();
            say(t.nameDeleted(n.name));
          } catch (e) { say(shownError(e), true); }
        } }, t.delete)))));
  }

  // The events of one save that carry an in-game day, by day (oldest first); only a save
  // with such events gets one.
  function timeline(gameId, s, events) {
    const label = saveLabel(gameId, s.saveId, s.saveName);
    const byDay = new Map();
    for (const ev of events) {
      if (ev.day === null || ev.day === undefined) continue;
      if (!byDay.has(ev.day)) byDay.set(ev.day, []);
      byDay.get(ev.day).push(ev);
    }
    const days = [...byDay.keys()].sort((a, b) => a - b);
    return el("aside", { class: "timeline", "aria-label": T().timelineOf(label) },
      el("h5", {}, T().timeline),
      el("ol", {}, ...days.map((day) => el("li", { class: "day", "data-day": String(day) },
        el("span", { class: "day-label" }, T().day(day)),
        el("ul", {}, ...byDay.get(day).map((ev) => el("li", { "data-event-id": String(ev.id) },
          el("span", { class: "kind" }, T().kind[ev.kind] || ev.kind), " ", ev.subject)))))));
  }

  function statLine(s) {
    return s ? `${T().days} ${s.days} · ${T().sessions} ${s.sessions} · ${T().active} ${hm(s.activeMs)} · ${T().last} ${when(s.lastPlayed)}` : "";
  }

  // Pinned first, then the newest (RFC 3339 strings in UTC sort as times).
  const order = (a, b) => (b.pinned - a.pinned) || (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);

  // -- search and filters (over the one view the page holds; nothing is sent) -----------------

  const filters = { q: "", game: "", save: "", kind: "", status: "" };
  const fold = (text) => String(text).normalize("NFKC").toLowerCase();
  const active = () => !!(filters.q.trim() || filters.game || filters.save || filters.kind || filters.status);

  // Every word of the search (split at spaces) must occur in the item's texts or its labels in either language.
  function matches(gameId, s, ev) {
    if (filters.game && filters.game !== gameId) return false;
    if (filters.save && filters.save !== key(gameId, s.saveId)) return false;
    if (filters.kind && filters.kind !== ev.kind) return false;
    if (filters.status && filters.status !== ev.status) return false;
    const words = fold(filters.q).split(/\s+/).filter(Boolean);
    if (!words.length) return true;
    const texts = [ev.subject, ev.summary, ...(ev.searchKeys || []), s.saveName || "", s.saveId, gameId];
    for (const l of Object.values(window.XTY_TEXTS)) {
      texts.push(l.kind[ev.kind] || "", l.status[ev.status] || "", l.gameName[gameId] || "");
      if (ev.day !== null && ev.day !== undefined) texts.push(l.day(ev.day));
    }
    const hay = fold(texts.join(" \n "));
    return words.every((w) => hay.includes(w));
  }

  function option(value, text, selected) {
    const o = el("option", { value }, text);
    o.selected = value === selected;
    return o;
  }

  function fillFilters(view) {
    const t = T();
    const games = [...new Set(view.saves.map((s) => s.gameId))].sort();
    if (filters.game && !games.includes(filters.game)) filters.game = "";
    $("f-game").replaceChildren(option("", t.allGames, filters.game), ...games.map((g) => option(g, gameLabel(g), filters.game)));
    const saves = view.saves.filter((s) => !filters.game || s.gameId === filters.game);
    if (filters.save && !saves.some((s) => key(s.gameId, s.saveId) === filters.save)) filters.save = "";
    $("f-save").replaceChildren(option("", t.allSaves, filters.save),
      ...saves.map((s) => option(key(s.gameId, s.saveId), `${gameLabel(s.gameId)} / ${saveLabel(s.gameId, s.saveId, s.saveName)}`, filters.save)));
    $("f-kind").replaceChildren(option("", t.allKinds, filters.kind), ...Object.keys(t.kind).map((k) => option(k, t.kind[k], filters.kind)));
    $("f-status").replaceChildren(option("", t.allStatus, filters.status), ...Object.keys(t.status).map((k) => option(k, t.status[k], filters.status)));
    $("search").value = filters.q;
  }

  let lastView = null;

  function renderMemory(view) {
    lastView = view;
    const p = view.profile;
    $("auto-shared").checked = !!p.autoShared;
    FIELDS = Object.keys(p).filter((f) => f !== "autoShared");
    const filled = (f) => (Array.isArray(p[f]) ? p[f].length > 0 : !!p[f]);
    const rows = FIELDS.filter(filled).map((f) => profileRow(f, p[f]));
    const empty = FIELDS.filter((f) => !filled(f));
    if (!rows.length) rows.push(el("tr", { class: "none" }, el("td", { colspan: "3", class: "empty" }, T().noProfile)));
    if (empty.length) rows.push(addFieldRow(empty, p));
    $("profile").replaceChildren(...rows);
    fillFilters(view);
    renderGames(view);
  }

  function renderGames(view) {
    const t = T();
    const gameStats = new Map(view.stats.games.map((g) => [g.gameId, g]));
    const saveStats = new Map(view.stats.saves.map((s) => [key(s.gameId, s.saveId), s]));
    const byGame = new Map();
    for (const s of view.saves) {
      if (!byGame.has(s.gameId)) byGame.set(s.gameId, []);
      byGame.get(s.gameId).push(s);
    }
    const filtering = active();
    let total = 0, shownCount = 0;
    const games = [];
    for (const [gameId, saves] of [...byGame.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const sections = [];
      for (const s of saves) {
        total += s.events.length;
        const events = s.events.filter((ev) => matches(gameId, s, ev)).sort(order);
        shownCount += events.length;
        if (filtering && !events.length) continue;
        const label = saveLabel(gameId, s.saveId, s.saveName);
        const names = (view.names || []).filter((n) => n.gameId === gameId && n.saveId === s.saveId);
        const headId = "save-" + games.length + "-" + sections.length;
        sections.push(el("section", { class: "save", "data-save": s.saveId, "data-game": gameId, "aria-labelledby": headId },
          el("div", { class: "save-head" },
            el("h4", { id: headId }, label),
            el("span", { class: "noname" }, s.saveName ? "" : t.noName),
            el("span", { class: "stat" }, statLine(saveStats.get(key(gameId, s.saveId)))),
            el("span", { class: "head-actions" },
              el("button", { type: "button", class: "export export-save", "aria-label": `${t.exportSave}${t.colon}${label}`, onclick: () => exportSave(gameId, s.saveId, label) }, t.exportSave),
              el("button", { type: "button", class: "delete clear-save", "aria-label": `${t.clearSave}${t.colon}${label}`, onclick: () => preview({ target: "save", gameId, saveId: s.saveId }) }, t.clearSave))),
          el("div", { class: "save-body" },
            events.length ? el("ul", { class: "events", "aria-label": label }, ...events.map((ev) => eventItem(gameId, s.saveId, ev)))
              : el("p", { class: "empty" }, t.noEvents),
            ...(events.some((ev) => ev.day !== null && ev.day !== undefined) ? [timeline(gameId, s, events)] : []),
            ...(names.length ? [nameList(gameId, s.saveId, names)] : []))));
      }
      if (filtering && !sections.length) continue;
      const name = gameLabel(gameId);
      games.push(el("article", { class: "game", "data-game": gameId, "aria-label": name },
        el("div", { class: "game-head" },
          el("h3", {}, name),
          el("span", { class: "stat" }, statLine(gameStats.get(gameId))),
          el("button", { type: "button", class: "delete clear-game", "aria-label": `${t.clearGame}${t.colon}${name}`, onclick: () => preview({ target: "game", gameId }) }, t.clearGame)),
        ...sections));
    }
    $("count").textContent = t.count(shownCount, total);
    const none = filtering ? t.noMatch : t.noGames;
    $("games").replaceChildren(...(games.length ? games : [el("p", { class: "empty" }, none)]));
    document.body.dataset.shown = String(shownCount);
  }

  // -- export: the server's export document (docs/memory-export.md), saved as a download --------

  const fileSafe = (text) => text.replace(/[\\/:*?"<>|\s\u0000-\u001f]+/g, "_").slice(0, 80);

  async function download(query, name) {
    let doc;
    try {
      doc = await call("GET", "export" + query);
    } catch (e) { say(shownError(e), true); return; }
    const blob = new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const file = fileSafe(name) + ".json";
    const a = el("a", { href: url, download: file, hidden: "" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    say(T().exported + file);
  }

  const exportSave = (gameId, saveId, label) => download(
    `?gameId=${encodeURIComponent(gameId)}&saveId=${encodeURIComponent(saveId)}`,
    `${T().filePrefix}-${gameLabel(gameId)}-${label}`);

  // Step one of a forget: the server's memory.preview (what would go, and a confirmToken).
  async function preview(target) {
    let answer;
    try {
      answer = await call("POST", "forget", target);
    } catch (e) { say(shownError(e), true); return; }
    pendingForget = { target, token: answer.confirmToken };
    const items = answer.saves.flatMap((s) => s.events.map((ev) =>
      `${gameLabel(s.gameId)} / ${saveLabel(s.gameId, s.saveId, s.saveName)}${T().colon}${ev.summary}`));
    $("confirm-body").replaceChildren(el("p", {}, `${T().willDelete} ${answer.itemCount} ${T().items}`),
      el("ul", { class: "preview-events" }, ...items.map((text) => el("li", {}, text))));
    $("confirm-trash").textContent = trashHours > 0 ? T().confirmTrash(trashHours) : T().confirmFinal;
    $("confirm").showModal();
  }

  // A shared field is cleared by correcting it to empty; the dialog shows what goes.
  function clearField(name, value) {
    pendingForget = { field: name, value: Array.isArray(value) ? [] : "" };
    $("confirm-body").replaceChildren(el("p", {}, T().willReset),
      el("p", { class: "preview-field" }, `${T().field[name] || name}${T().colon}${shown(value)}`));
    $("confirm-trash").textContent = "";
    $("confirm").showModal();
  }

  // Step two: the same target with its confirmToken (single-use, this page session, 2 minutes).
  async function confirmForget() {
    const pending = pendingForget;
    pendingForget = null;
    $("confirm").close();
    if (!pending) return;
    try {
      if (pending.field) {
        await call("POST", "profile", { field: pending.field, value: pending.value });
        say(T().deleted);
        await refresh();
        return;
      }
      const done = await call("POST", "forget", { ...pending.target, confirmToken: pending.token });
      await refresh();
      if (done.trashId) {
        say(T().deletedTrash(trashHours));
        $("status").append(" ", el("button", { type: "button", id: "undo", class: "undo", onclick: () => restore(done.trashId) }, T().undo));
      } else say(T().deleted);
    } catch (e) { say(shownError(e), true); }
  }

  // -- the trash: what a forget put there, restorable until its window ends ----------------------

  let trashHours = 0;

  function trashEntry(e) {
    const t = T();
    const where = e.saves.map((s) => `${gameLabel(s.gameId)} / ${saveLabel(s.gameId, s.saveId, s.saveName)}`);
    const title = [t.target[e.target] || e.target, ...where].join(" · ");
    const lines = e.saves.flatMap((s) => s.events.map((ev) =>
      el("li", {}, `${gameLabel(s.gameId)} / ${saveLabel(s.gameId, s.saveId, s.saveName)}${t.colon}${ev.summary}`)));
    if (e.profileFields.length) lines.push(el("li", {}, t.profileCleared + e.profileFields.map((f) => t.field[f] || f).join("、")));
    const button = el("button", { type: "button", class: "restore", "aria-label": `${t.restore}${t.colon}${title}`, onclick: () => restore(e.trashId) }, t.restore);
    return el("li", { class: "trash-entry", "data-trash-id": String(e.trashId) },
      el("div", { class: "trash-head" },
        el("h3", {}, title),
        el("span", { class: "stat" }, `${t.trashedAt} ${when(e.trashedAt)} · ${t.restorable(hm(e.leftMs))}`),
        button),
      el("ul", { class: "trash-items" }, ...lines));
  }

  function renderTrash(trash) {
    const t = T();
    $("trash-note").textContent = trash.hours > 0 ? t.trashNote(trash.hours) : t.trashOff;
    $("trash").replaceChildren(...(trash.entries.length ? trash.entries.map(trashEntry) : [el("li", { class: "empty" }, t.trashEmpty)]));
  }

  async function restore(trashId) {
    try {
      const back = await call("POST", "restore", { trashId });
      await refresh();
      say(T().restored(back.items));
    } catch (e) { say(shownError(e), true); }
  }

  // -- settings: the provider, the key (never shown back), the models, the check ------------------

  let settingsView = null;
  // Only the form fields: other rows in the view (the paired mods' table) carry ids of their own.
  const KEYED = () => [...document.querySelectorAll("#settings-view :is(input, select, textarea)[data-key]")];

  function renderSettings(sv, profile) {
    const t = T();
    settingsView = sv;
    $("s-first-run").hidden = sv.modelConfigured !== false;  // the server has no chat model yet
    // Nothing chosen yet: the list starts on "choose a provider", never on one the player did not pick.
    const current = sv.presets.find((p) => p.baseUrl === sv.values["model.base_url"]);
    const chosen = current ? current.name : sv.values["model.base_url"] ? "other" : "";
    const names = [...(chosen ? [] : [""]), ...sv.presets.map((p) => p.name), "other"];
    $("s-preset").replaceChildren(...names.map((n) => option(n, t.presetName[n] || n, chosen)));
    presetNote();
    renderSpeakup(sv.editable);
    for (const input of KEYED()) {
      const dotted = input.dataset.key;
      const value = sv.values[dotted];
      if (input.type === "checkbox") input.checked = !!value;
      else input.value = value ?? "";
      const by = sv.pinned[dotted];
      input.disabled = !!by;
      const note = document.querySelector(`#settings-view [data-pin="${dotted}"]`);
      note.textContent = by ? t.pinnedBy[by] || by : "";
      if (by) input.setAttribute("aria-description", note.textContent);
      else input.removeAttribute("aria-description");
    }
    $("s-vision-route").hidden = $("s-vision").checked;
    const key = sv.key;
    const status = t.keyStatus[key.source] || t.keyStatus.none;
    $("s-key-status").textContent = key.shown || key.source === "none" ? status(key.shown, key.backend) : "";
    $("s-key-warning").textContent = key.warning ? t.keyFile : "";
    // The stored key goes only to the provider it was saved for (the server decides).
    $("s-key-origin").textContent = key.applies === false ? t.keyOtherProvider(key.origin, key.provider) : "";
    renderProviderChanges(sv.providerChanges || []);
    $("s-key").value = "";
    $("s-key").disabled = !!key.pinned;
    $("s-forget-key").hidden = !(key.source === "keyring" || key.source === "file");
    $("s-name").value = profile.companionName || "";
    $("s-persona").value = profile.companionPersona || "";
    const langs = Object.keys(t.languages);
    const lang = langs.includes(profile.language || "") ? (profile.language || "") : profile.language;
    $("s-language").replaceChildren(...[...new Set([...langs, lang])].map((l) => option(l, t.languages[l] ?? l, lang)));
    $("s-auto-shared").checked = !!profile.autoShared;
    renderEmbedding(sv.embedding, sv.pinned);
  }

  // Speaking up (主动说话): one fieldset per game the server lists (speakup.games.<game>.<field>);
  // filled and saved like every other keyed field, so a pinned value shows who pins it.
  const SPEAKUP_INPUT = {
    enabled: { type: "checkbox" }, cooldown_minutes: { type: "number", min: "0", max: "1440", step: "1" },
    lines_per_hour: { type: "number", min: "0", max: "60", step: "1" }, token_share: { type: "number", min: "0", max: "1", step: "0.05" },
    quiet_from: { type: "number", min: "0", max: "23", step: "1" }, quiet_until: { type: "number", min: "0", max: "23", step: "1" },
  };

  function renderSpeakup(editable) {
    const t = T(), games = new Map();
    for (const dotted of editable.filter((k) => k.startsWith("speakup.games."))) {
      const rest = dotted.slice("speakup.games.".length), at = rest.lastIndexOf(".");
      const game = rest.slice(0, at);
      if (!games.has(game)) games.set(game, []);
      games.get(game).push([rest.slice(at + 1), dotted]);
    }
    $("s-speakup").hidden = !games.size;
    $("s-speakup-games").replaceChildren(...[...games].map(([game, fields]) => el("fieldset", { "data-game": game },
      el("legend", {}, gameLabel(game)),
      ...fields.flatMap(([field, dotted]) => {
        const input = el("input", { ...SPEAKUP_INPUT[field], id: `s-speakup-${game}-${field}`, "data-key": dotted });
        const text = el("span", {}, t.speakupField[field] || field);
        const label = input.type === "checkbox" ? el("label", { class: "check" }, input, " ", text) : el("label", {}, text, " ", input);
        return [label, el("p", { class: "pin", "data-pin": dotted })];
      }))));
  }

  async function saveSpeakup() {
    const changes = Object.fromEntries(Object.entries(settingsChanges()).filter(([k]) => k.startsWith("speakup.")));
    markFields([]);
    say("");
    try {
      if (Object.keys(changes).length) await call("POST", "settings", { changes });
      await refresh();
      say(T().speakupSaved);
    } catch (e) { say(shownError(e), true); markFields(e.fields); }
  }

  // Memory vectors: the embedder running now and the one chosen (the server says what each
  // choice stores and uses; a new one counts after a restart).
  const EMB_KEYS = ["memory.local_embedding", "memory.provider_embedding", "models.embedding.base_url", "models.embedding.model"];
  const embChoice = () => (document.querySelector('input[name="s-emb"]:checked') || {}).value;

  function renderEmbedding(e, pinned) {
    const t = T();
    $("s-embedding").hidden = !e;
    if (!e) return;
    const kind = (k) => t.embKind[k] || k;
    const auto = e.inProcessInstalled ? `${kind("in_process")}（${e.inProcessModel}）`
      : e.providerModel ? `${kind("cloud")}（${e.providerModel}）` : kind("none");
    $("s-emb-auto").textContent = t.embAuto(auto);
    $("s-emb-in-process").textContent = t.embInProcess(e.inProcessModel, e.inProcessInstalled);
    $("s-emb-provider").textContent = t.embProvider(e.providerModel, e.provider);
    $("s-emb-server").textContent = t.embServer;
    const held = EMB_KEYS.some((k) => pinned[k]);
    for (const radio of document.querySelectorAll('input[name="s-emb"]')) {
      radio.checked = radio.value === e.choice;
      radio.disabled = held || (radio.value === "in_process" && !e.inProcessInstalled)
        || (radio.value === "provider" && !e.providerModel);
    }
    $("s-emb-base-url").value = e.serverBaseUrl;
    $("s-emb-model").value = e.serverModel;
    $("s-emb-base-url").disabled = $("s-emb-model").disabled = $("s-save-embedding").disabled = held;
    $("s-emb-pin").textContent = held ? t.embPinned : "";
    showServerFields();
    const use = e.inUse;
    $("s-emb-in-use").textContent = t.embInUse(kind(use.kind), use.model, use.origin);
    $("s-emb-restart").textContent = e.restart ? t.embRestart(kind(e.chosen.kind), e.chosen.model) : "";
  }

  function showServerFields() {
    $("s-emb-server-url").hidden = $("s-emb-server-model").hidden = embChoice() !== "server";
  }

  async function saveEmbedding() {
    const choice = embChoice();
    if (!choice) return;
    const changes = { embedding: choice };
    if (choice === "server") {
      changes["models.embedding.base_url"] = $("s-emb-base-url").value.trim() || null;
      changes["models.embedding.model"] = $("s-emb-model").value.trim() || null;
    }
    try {
      await call("POST", "settings", { changes });
      await refresh();
      say(T().embSaved);
    } catch (e) { say(shownError(e), true); }
  }

  function renderProviderChanges(changes) {
    const t = T();
    $("s-provider-log").hidden = !changes.length;
    $("s-provider-changes").replaceChildren(...changes.slice().reverse().map((c) =>
      el("li", { "data-what": c.what }, `${when(new Date(c.at * 1000).toISOString())} ${t.providerChange[c.what](c)}`)));
  }

  // Under the provider: where its key comes from, and that a text-only preset sends no screenshots.
  function presetNote() {
    const t = T(), name = $("s-preset").value;
    const chosen = settingsView && settingsView.presets.find((p) => p.name === name);
    const parts = [];
    if (chosen && chosen.keyPage) parts.push(t.keyWhere(t.presetName[name] || name), " ", el("a", { href: chosen.keyPage, target: "_blank", rel: "noopener noreferrer" }, chosen.keyPage));
    else if (chosen) parts.push(t.noKeyNeeded);
    else if (name === "other") parts.push(t.otherHint);
    if (chosen && !chosen.vision) parts.push(el("br"), t.textOnly(t.presetName[name] || name));
    $("s-preset-note").replaceChildren(...parts);
  }

  // A refused save points at its field: marked, and the cursor put there.
  function markFields(fields) {
    for (const node of document.querySelectorAll("#settings-view [aria-invalid]")) node.removeAttribute("aria-invalid");
    for (const dotted of fields || []) {
      const input = [...KEYED()].find((i) => i.dataset.key === dotted);
      if (!input) continue;
      const target = dotted === "model.base_url" && !$("s-preset").value ? $("s-preset") : input;
      target.setAttribute("aria-invalid", "true");
      target.focus();
    }
  }

  function fillFromPreset() {
    presetNote();
    const chosen = settingsView && settingsView.presets.find((p) => p.name === $("s-preset").value);
    if (!chosen) {  // "other": the player types the address and the model
      if ($("s-preset").value === "other" && !$("s-base-url").disabled) $("s-base-url").focus();
      return;
    }
    if (!$("s-base-url").disabled) $("s-base-url").value = chosen.baseUrl;
    if (!$("s-model").disabled) $("s-model").value = chosen.model;
    if (!$("s-vision").disabled) $("s-vision").checked = chosen.vision;
    $("s-vision-route").hidden = $("s-vision").checked;
  }

  // What the settings view's fields change (dotted keys of the stored settings).
  function settingsChanges() {
    const changes = {};
    for (const input of KEYED()) {
      if (input.disabled) continue;
      const dotted = input.dataset.key;
      const before = settingsView.values[dotted];
      if (input.type === "checkbox") {
        if (input.checked !== !!before) changes[dotted] = input.checked;
      } else if (input.type === "number") {
        const value = input.value.trim() === "" ? null : Number(input.value);
        if (value !== (before ?? null)) changes[dotted] = value;
      } else {
        const value = input.value.trim();
        if (value !== (before ?? "")) changes[dotted] = value === "" ? null : value;
      }
    }
    if (changes["models.vision.model"] || (!$("s-vision").checked && $("s-vision-model").value.trim())) {
      changes["models.vision.vision"] = true;  // the vision route takes the screenshots
      if (!$("s-vision-base-url").value.trim() && !$("s-vision-base-url").disabled) changes["models.vision.base_url"] = $("s-base-url").value.trim() || null;
    }
    return changes;
  }

  async function saveSettings() {
    const changes = settingsChanges();
    const typed = $("s-base-url").value.trim();
    markFields([]);
    say("");  // the answer below is this save's
    try {
      if (Object.keys(changes).length) await call("POST", "settings", { changes });
      const key = $("s-key").value.trim();
      if (key) await call("POST", "key", { apiKey: key });
      $("s-key").value = "";
      await refresh();
      const saved = settingsView.values["model.base_url"] || "";
      say(typed && saved && typed !== saved ? T().urlCompleted(saved) : T().settingsSaved);
    } catch (e) { say(shownError(e), true); markFields(e.fields); }
  }

  async function saveCompanion(profile) {
    const wanted = { companionName: $("s-name").value.trim(), companionPersona: $("s-persona").value.trim(), language: $("s-language").value };
    try {
      const changes = settingsChanges();  // the trash window sits here too
      if (Object.keys(changes).length) await call("POST", "settings", { changes });
      for (const [field, value] of Object.entries(wanted)) {
        if (value !== (profile[field] || "")) await call("POST", "profile", { field, value });
      }
      if ($("s-auto-shared").checked !== !!profile.autoShared) await call("POST", "profile", { field: "autoShared", value: $("s-auto-shared").checked });
      await refresh();
      say(T().settingsSaved);
    } catch (e) { say(shownError(e), true); }
  }

  // A doctor code in the page's language; the report's English when this page has no text for it.
  function said(table, code, params, english) {
    const t = T(), text = code && table[code];
    if (!text) return english || "";
    const p = params || {};
    const setting = (field) => t.doctorSetting[`${p.setting}.${field}`] || t.inConfig(`${p.setting}.${field}`);
    return text(p, setting, (error) => t.errorName[error] || error);
  }

  // "测试连接": xtyserver doctor's checks, one table per route (drawn again in the other language).
  let lastReport = null;

  function renderDoctor(report) {
    const t = T();
    const tables = report.routes.map((r) => el("div", { class: "table-wrap" }, el("table", { class: "stats doctor-route", "data-roles": r.roles.join(" ") },
      el("caption", {}, `${r.roles.map((x) => t.roles[x] || x).join(" / ")}: ${r.model || "-"} · ${r.base_url || "-"}`),
      row(t.doctorCols, true),
      ...r.checks.map((c) => {
        const line = row([t.checkName[c.name] || c.name, t.checkStatus[c.status] || c.status,
          said(t.doctorSeen, c.detail_code, c.params, c.detail), said(t.doctorChange, c.hint_code, c.params, c.hint)]);
        line.dataset.check = c.name;
        line.dataset.status = c.status;
        return line;
      }))));
    $("doctor").replaceChildren(el("p", { class: report.ok ? "ok" : "bad" }, report.ok ? t.doctorOk : t.doctorFail), ...tables);
  }

  async function testConnection() {
    const t = T();
    $("s-test").disabled = true;
    $("doctor").replaceChildren(el("p", { class: "note" }, t.testing));
    document.body.dataset.doctor = "running";
    try {
      lastReport = await call("POST", "doctor", {});
      renderDoctor(lastReport);
      document.body.dataset.doctor = lastReport.ok ? "ok" : "fail";
    } catch (e) {
      lastReport = null;
      $("doctor").replaceChildren();
      say(shownError(e), true);
      document.body.dataset.doctor = "error";
    } finally { $("s-test").disabled = false; }
  }

  // -- statistics view ---------------------------------------------------------------------

  function row(cells, head) {
    return el("tr", {}, ...cells.map((c) => el(head ? "th" : "td", {}, c)));
  }

  // Active time per day of the last `count` days: bars over a time axis (0, half, the most),
  // the first, middle and last dates under it, and each played day's value in text beside.
  function chart(gameId, days, until, count) {
    const end = new Date(until + "T00:00:00Z");
    const dates = [];
    for (let i = count - 1; i >= 0; i--) dates.push(new Date(end.getTime() - i * 86400000).toISOString().slice(0, 10));
    const byDate = new Map(days.map((d) => [d.date, d.activeMs]));
    const most = Math.max(60000, ...days.map((d) => d.activeMs));
    const node = (tag, attrs, text) => {
      const n = document.createElementNS(SVG, tag);
      for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
      if (text !== undefined) n.textContent = text;
      return n;
    };
    const w = 12, h = 110, left = 64, top = 8;
    const width = left + dates.length * w;
    const svg = node("svg", { class: "chart", "data-game": gameId, viewBox: `0 0 ${width} ${top + h + 22}`, role: "img", "aria-label": T().chartOf(gameLabel(gameId)) });
    const axis = (ms) => (most < 3600000 ? T().minShort(Math.round(ms / 60000)) : T().hourShort(Math.round(ms / 360000) / 10));
    for (const [share, text] of [[0, "0"], [0.5, axis(most / 2)], [1, axis(most)]]) {
      const y = top + h - share * h;
      svg.append(node("line", { class: "grid", x1: left - 4, x2: width, y1: y, y2: y }));
      svg.append(node("text", { class: "axis", x: left - 8, y: y + 4, "text-anchor": "end" }, text));
    }
    dates.forEach((date, i) => {
      if (!byDate.has(date)) return;
      const ms = byDate.get(date);
      const height = Math.max(3, Math.round((ms / most) * h));
      const bar = node("rect", { class: "bar", "data-date": date, "data-active-ms": ms, x: left + i * w + 2, y: top + h - height, width: w - 4, height });
      bar.append(node("title", {}, `${date}${T().colon}${hm(ms)}`));
      svg.append(bar);
    });
    const short = (date) => `${Number(date.slice(5, 7))}-${date.slice(8)}`;
    for (const [i, anchor] of [[0, "start"], [Math.floor(dates.length / 2), "middle"], [dates.length - 1, "end"]]) {
      const x = left + i * w + (anchor === "end" ? w : anchor === "middle" ? w / 2 : 0);
      svg.append(node("text", { class: "date", x, y: top + h + 17, "text-anchor": anchor }, short(dates[i])));
    }
    const played = dates.filter((d) => byDate.has(d)).reverse();
    const values = played.length
      ? el("ul", { class: "chart-values" }, ...played.map((d) => el("li", { "data-date": d }, `${short(d)}${T().colon}${hm(byDate.get(d))}`)))
      : el("p", { class: "empty" }, T().chartNone);
    return [svg, values];
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
      ...stats.games.map((g) => row([gameLabel(g.gameId), String(g.days), String(g.sessions), hm(g.activeMs), when(g.lastPlayed)])));
    $("stats-saves").replaceChildren(row([t.game, t.saveCol, t.days, t.sessions, t.active, t.last], true),
      ...stats.saves.map((s) => row([gameLabel(s.gameId), saveLabel(s.gameId, s.saveId, s.saveName), String(s.days), String(s.sessions), hm(s.activeMs), when(s.lastPlayed)])));
    const tokens = tokenDays(stats.tokens || []);
    $("stats-tokens").replaceChildren(row([t.date, t.calls, t.promptTokens, t.completionTokens], true),
      ...(tokens.length ? tokens.map((d) => row([d.date, String(d.calls), String(d.promptTokens), String(d.completionTokens)]))
        : [row([t.noTokens, "", "", ""])]));
    $("charts").replaceChildren(...stats.games.map((g) => el("figure", { class: "chart-box" },
      el("figcaption", {}, gameLabel(g.gameId)),
      ...chart(g.gameId, stats.daily.filter((d) => d.gameId === g.gameId), stats.until, stats.days))));
    $("zone-note").textContent = t.zoneNote(zone);
  }

  // -- wiring ------------------------------------------------------------------------------

  async function refresh() {
    applyTexts();
    const view = await call("GET", "view");  // one store snapshot for either tab
    const trash = await call("GET", "trash");
    trashHours = trash.hours;
    learnNames(view);
    if (tab === "memory") renderMemory(view);
    else if (tab === "stats") renderStats(view);
    else if (tab === "settings") {
      renderSettings(await call("GET", "settings"), view.profile);
      if (lastReport && document.body.dataset.doctor !== "running") renderDoctor(lastReport);
    }
    else renderTrash(trash);
    $("memory-view").hidden = tab !== "memory";
    $("stats-view").hidden = tab !== "stats";
    $("trash-view").hidden = tab !== "trash";
    $("settings-view").hidden = tab !== "settings";
    for (const [id, name] of [["tab-memory", "memory"], ["tab-stats", "stats"], ["tab-trash", "trash"], ["tab-settings", "settings"]]) {
      $(id).classList.toggle("active", tab === name);
      $(id).setAttribute("aria-pressed", String(tab === name));
    }
    document.body.dataset.ready = tab;
  }

  async function show(next) {
    if (next !== tab) say("");  // a line says what happened on its own tab
    tab = next;
    delete document.body.dataset.ready;
    try { await refresh(); } catch (e) {
      say(shownError(e), true);
      if (e.kind === "session") document.body.dataset.ready = "locked";
    }
  }

  // The first run: a server without a chat model opens on 设置, asked of the server itself
  // (its settings view says whether its router has a model), never guessed in the browser.
  async function firstTab() {
    try {
      return (await call("GET", "settings")).modelConfigured === false ? "settings" : "memory";
    } catch (e) { return "memory"; }  // no settings view here, or no session: the memory tab says so
  }

  async function open() {
    const problem = await openSession();
    if (problem) { say(problem, true); document.body.dataset.ready = "locked"; return; }
    await show(await firstTab());
  }

  async function start() {
    applyTexts();
    $("tab-memory").addEventListener("click", () => show("memory"));
    $("tab-stats").addEventListener("click", () => show("stats"));
    $("tab-trash").addEventListener("click", () => show("trash"));
    $("tab-settings").addEventListener("click", () => show("settings"));
    $("s-preset").addEventListener("change", fillFromPreset);
    $("s-vision").addEventListener("change", () => { $("s-vision-route").hidden = $("s-vision").checked; });
    $("s-save").addEventListener("click", saveSettings);
    $("s-test").addEventListener("click", testConnection);
    $("s-save-embedding").addEventListener("click", saveEmbedding);
    $("s-save-speakup").addEventListener("click", saveSpeakup);
    for (const radio of document.querySelectorAll('input[name="s-emb"]')) radio.addEventListener("change", showServerFields);
    $("s-forget-key").addEventListener("click", async () => {
      try { await call("POST", "key", { apiKey: null }); await refresh(); say(T().settingsSaved); } catch (e) { say(shownError(e), true); }
    });
    $("s-save-companion").addEventListener("click", async () => saveCompanion((await call("GET", "view")).profile));
    $("lang").addEventListener("click", () => {
      lang = lang === "zh" ? "en" : "zh";
      localStorage.setItem("xty-lang", lang);
      say("");
      show(tab);
    });
    $("confirm-yes").addEventListener("click", confirmForget);
    const refilter = () => { if (lastView) renderGames(lastView); };
    $("search").addEventListener("input", (e) => { filters.q = e.target.value; refilter(); });
    for (const [id, name] of [["f-game", "game"], ["f-save", "save"], ["f-kind", "kind"], ["f-status", "status"]]) {
      $(id).addEventListener("change", (e) => {
        filters[name] = e.target.value;
        if (lastView && name === "game") fillFilters(lastView);  // the saves of that game
        refilter();
      });
    }
    $("f-clear").addEventListener("click", () => {
      Object.assign(filters, { q: "", game: "", save: "", kind: "", status: "" });
      if (lastView) { fillFilters(lastView); refilter(); }
    });
    $("export-all").addEventListener("click", () => download("", `${T().fileAll}-${new Date().toISOString().slice(0, 10)}`));
    $("confirm-no").addEventListener("click", () => { pendingForget = null; $("confirm").close(); });
    $("auto-shared").addEventListener("change", async (e) => {
      try {
        await call("POST", "profile", { field: "autoShared", value: e.target.checked });
        say(T().saved);
      } catch (err) { say(shownError(err), true); }
    });
    // A new link pasted into this tab (its session ended) changes only the fragment: open it.
    window.addEventListener("hashchange", async () => {
      if (!location.hash.startsWith("#token=")) return;
      say("");
      await open();
    });
    await open();
  }

  start();
})();
