-- One protocol/v1 session over POST /v1/http (v1.md "HTTP transport"), for DST's mod Lua.
--
--   local client = Client.new{
--       url = "http://localhost:8765/v1/http",
--       token = key,
--       identity = { gameId = "dont-starve-together", saveId = id, saveName = "Wilson's world" },
--       adapter = { name = "XTY DST", version = "1.0.0" },
--       timezone = "Asia/Shanghai",
--       query = function(url, callback, method, body) TheSim:QueryServer(url, callback, method, body) end,
--       now = GetStaticTime,                  -- seconds of real time: it runs on while paused
--   }
--   client:connect()
--   TheWorld:DoStaticPeriodicTask(0.25, function() client:pump(1000) end)   -- static: runs while paused
--   client:typing(draft)   -- the mod's chat box, on every key: a chat.typing hint on a pause
--
-- Every call carries the queued frames, plus a heartbeat when heartbeatMs has passed since the
-- last one (a poll without frames is not a heartbeat), and takes the server frames queued since
-- the last call. One call is in flight at a time. Whatever happens (no server yet, a closed or
-- expired session, a server restart), the client opens a new session with a new hello, with
-- backoff, until it is closed for good (4001 unauthorized, 4008 flood) or stopped. Every chat
-- ends in done or error within chat_timeout seconds; Client.explain(code) says why to the player.
local json = require("xty.json")

local Client = {}
Client.__index = Client

-- Close codes after which opening again cannot help: a refused key, a flooding mod.
local FINAL = { [4001] = true, [4008] = true }

-- What the player is told when a chat ends without a reply (Chinese first, English beside).
Client.MESSAGES = {
    no_server = "小汤圆没连上：请先启动小汤圆（xtyserver）。/ XiaoTangYuan is not reachable: start xtyserver first.",
    timeout = "小汤圆这次没有及时回答。/ XiaoTangYuan did not answer in time.",
    connection_lost = "和小汤圆的连接断了，正在重新连接。/ The connection to XiaoTangYuan dropped; reconnecting.",
    unauthorized = "小汤圆不认这个 mod 的密钥。/ XiaoTangYuan refused this mod's key.",
    closed = "小汤圆的连接已关闭。/ The connection to XiaoTangYuan is closed.",
    pair_denied = "配对被拒绝了：请在小汤圆页面上点“允许”。/ Pairing was denied: click Allow on the XiaoTangYuan page.",
    pair_expired = "配对码过期了：重新进入世界再试一次。/ The pairing code expired: load the world again to retry.",
}

-- What the player is shown while a pair request waits for the click on the memory page.
function Client.pair_prompt(code)
    return "在小汤圆页面上确认配对码 " .. tostring(code) .. " / Confirm code " .. tostring(code) .. " on the XiaoTangYuan page"
end

-- The player-facing reason of a chat.error frame (the server's message when it sent one).
function Client.explain(frame)
    local code = type(frame) == "table" and frame.code or frame
    return Client.MESSAGES[code]
        or (type(frame) == "table" and frame.message)
        or ("小汤圆出错了（" .. tostring(code) .. "）。/ XiaoTangYuan error (" .. tostring(code) .. ").")
end

function Client.new(opts)
    local self = setmetatable({}, Client)
    self.url, self.token, self.identity = opts.url, opts.token, opts.identity
    self.adapter, self.timezone = opts.adapter, opts.timezone
    self.query, self.now = opts.query, opts.now
    self.log = opts.log or function() end
    self.on_frame = opts.on_frame or function() end   -- every server frame no chat claimed
    -- The companion speaking up (v1.md "game.event"): on_companion(text, finished, why) with its line
    -- so far, then once with finished = true (a line the player's chat cut short ends there too).
    self.on_companion = opts.on_companion
    self.lines = {}
    -- Pairing (no token): on_pair(code, seconds) to show the code, on_key(key) to keep the key,
    -- on_key_refused(key) to forget the key the server refused (revoked on the page): pair next time.
    self.on_pair, self.on_key, self.on_key_refused = opts.on_pair, opts.on_key, opts.on_key_refused
    -- key_source() returns the kept key (or nil), read again before each pair request: another
    -- copy of the mod sharing the game's persistent strings may have paired meanwhile.
    self.key_source = opts.key_source
    -- install_id: this install's random id, kept with the key (protocol/v1.md "Keys per install"):
    -- sent in adapter.pair so that installs with their own persistent strings (two Steam accounts)
    -- each have their own key. A server older than the field refuses it: pairing goes on without.
    self.install_id = opts.install_id
    self.random = opts.random or math.random
    -- A chat without its end after this many seconds ends as "timeout".
    self.chat_timeout = opts.chat_timeout or 90
    -- A chat waiting while the server is unreachable ends as "no_server" after this many seconds.
    self.outage_grace = opts.outage_grace or 10
    -- A call QueryServer never answered is given up after waitMs plus this many seconds.
    self.call_timeout = opts.call_timeout or 30
    self.backoff_base, self.backoff_cap = opts.backoff_base or 1, opts.backoff_cap or 30
    -- Typing hints (client:typing): a draft unchanged this many seconds is hinted, at most one
    -- hint in typing_interval seconds; hints counts those queued.
    self.typing_pause, self.typing_interval = opts.typing_pause or 0.3, opts.typing_interval or 1
    self.hints = 0
    self.queue, self.chats, self.next_id = {}, {}, 0
    self.session, self.hello, self.busy, self.closed = nil, nil, false, nil
    self.want_hello, self.stopped = false, nil
    self.last_beat, self.retry_at, self.attempt, self.generation = 0, 0, 0, 0
    return self
end

function Client:id(kind)
    self.next_id = self.next_id + 1
    return kind .. "-" .. self.next_id
end

-- Open a session with the next call (and again after any loss, until stop()).
function Client:connect()
    self.session, self.hello, self.closed, self.stopped = nil, nil, nil, nil
    self.want_hello, self.retry_at = true, 0
end

-- Stop opening sessions (the player left the world). The server ends the play session at the
-- last heartbeat; HTTP has no close.
function Client:stop()
    self.want_hello, self.stopped = false, "stopped"
    self:end_chats(function() return true end, "closed")
end

function Client:pair_frame()
    self.pairing = self:id("pair")
    return {
        type = "adapter.pair", id = self.pairing, adapter = self.adapter, gameId = self.identity.gameId,
        installId = self.install_id,
    }
end

function Client:hello_frame()
    return {
        type = "adapter.hello", id = self:id("hello"), protocol = "v1",
        adapter = self.adapter, identity = self.identity, token = self.token,
        capabilities = { image = false, voice = false }, timezone = self.timezone,
        actions = self.actions,   -- xty.actions: what the companion may do (v1.md "Actions")
    }
end

-- Queue a client frame for the next call.
function Client:send(frame) self.queue[#self.queue + 1] = frame end

function Client:update_state(model_context, identity)
    if identity then self.identity = identity end
    self.last_context = model_context
    self:send({ type = "state.update", modelContext = model_context, identity = identity })
end

-- Call a player's handler; one that throws is logged and ends nothing else.
function Client:call(handler, arg)
    if not handler then return end
    local ok, problem = pcall(handler, arg)
    if not ok then self.log("a handler failed: " .. tostring(problem)) end
end

-- One player turn: handlers.delta(text), handlers.done(frame), handlers.error(frame) where
-- frame.code says why (Client.explain(frame) for the player). source: "text" or "voice".
-- Returns the id.
function Client:chat(text, model_context, handlers, source)
    self.draft, self.hinted = nil, nil   -- sent: nothing of it is hinted after
    local id = self:id("chat")
    local frame = { type = "chat.send", id = id, text = text, source = source or "text" }
    if model_context then frame.context = { modelContext = model_context } end
    self:begin(id, { handlers = handlers or {}, frame = frame, deadline = self.now() + self.chat_timeout })
    return id
end

-- A turn (chat or voice) is kept under its id and sent, or ended at once with why it cannot be.
function Client:begin(id, turn)
    self.chats[id] = turn
    if self.stopped then
        -- After a refused pairing the player is told that, not that a key was refused.
        local code = FINAL[self.stopped] and (self.pair_refused or "unauthorized") or "closed"
        self:finish(id, { type = "chat.error", id = id, code = code })
    elseif self.outage and not self.hello then
        -- Nothing is listening: say so now rather than after a wait.
        self:finish(id, { type = "chat.error", id = id, code = "no_server" })
    else
        self:send(turn.frame)
    end
end

function Client:cancel(id) self:send({ type = "chat.cancel", id = id }) end

-- Typing hints (v1.md "chat.typing"): the player is typing draft into the mod's chat box. Call it
-- on every key (or every frame the box is open: the same text again is no change). pump() queues
-- the draft as a chat.typing frame once it has not changed for typing_pause seconds (the player
-- paused), never the same draft twice and at most one hint in typing_interval seconds (an IME
-- commits a phrase at a time, with a pause after each): the server embeds the question for its
-- memory search before chat() sends it, so the reply starts sooner. chat() ends it; a blank
-- draft, or one over 2,000 characters, is not hinted. The hint has no answer.
function Client:typing(draft)
    if draft ~= self.draft then self.draft, self.draft_at = draft, self.now() end
end

-- Unicode code points, as the server counts chars.
local function chars(text) return select(2, text:gsub("[^\128-\191]", "")) end

-- The draft to hint at now, or nil; a draft returned is not returned again. (The clock is a
-- float: a pause of exactly typing_pause, off by a rounding error, still counts.)
function Client:due_hint(now)
    local draft = self.draft
    if not draft or draft == self.hinted or now - self.draft_at + 1e-6 < self.typing_pause then return nil end
    if self.hinted_at and now - self.hinted_at + 1e-6 < self.typing_interval then return nil end
    if not draft:find("%S") or chars(draft) > 2000 then return nil end
    self.hinted, self.hinted_at = draft, now
    return draft
end

-- Push-to-talk (v1.md "Voice"): DST's Lua has no audio, so the server records the PC's
-- microphone from voice_start (the key pressed) to voice_stop (released), answers what it heard
-- with handlers.transcript(text, final), then runs the turn with the same id: handlers.delta,
-- done and error as for chat (error also for a failed utterance: frame.code, Client.explain).
-- The reply is spoken on the PC's speakers unless speech is "none". Returns the id.
local VOICE_GOES_ON = { voice_timeout = true, audio_too_long = true, speech_unavailable = true }
function Client:voice_start(handlers, speech)
    local id = self:id("voice")
    local frame = { type = "voice.start", id = id }
    if speech and speech ~= "speakers" then frame.speech = speech end
    -- The utterance (at most 30 s) comes before the reply's own time.
    local deadline = self.now() + self.chat_timeout + 30
    self:begin(id, { handlers = handlers or {}, frame = frame, deadline = deadline, voice = true })
    return id
end

function Client:voice_stop(id) self:send({ type = "voice.stop", id = id }) end
function Client:voice_cancel(id) self:send({ type = "voice.cancel", id = id }) end
-- Something just happened in the game (v1.md "game.event"): kind from the documented list,
-- facts = { subject, place, value, maxValue, count } (each optional). No answer unless refused.
-- Only sent while a session is open: an event is news now or never.
function Client:event(kind, facts)
    if not self.session or self.stopped then return false end
    local frame = { type = "game.event", kind = kind, saveId = self.identity.saveId }
    if facts and next(facts) then frame.facts = facts end
    self:send(frame)
    return true
end

-- A chat.delta / chat.done / chat.error of the companion's own line.
function Client:companion(frame)
    local parts = self.lines[frame.id] or {}
    self.lines[frame.id] = parts
    if frame.type == "chat.delta" then
        parts[#parts + 1] = frame.text
        self:call(self.on_companion and function() self.on_companion(table.concat(parts), false) end)
    else
        self.lines[frame.id] = nil
        local text = frame.type == "chat.done" and (frame.text or table.concat(parts)) or table.concat(parts)
        -- why: the server's line saying why it spoke and how to stop it (chat.done only).
        local why = frame.type == "chat.done" and frame.why or nil
        self:call(self.on_companion and function() self.on_companion(text, true, why) end)
    end
end

function Client:finish(id, frame)
    local chat = self.chats[id]
    if not chat then return end
    self.chats[id] = nil
    if frame.type == "chat.done" then self:call(chat.handlers.done, frame) else self:call(chat.handlers.error, frame) end
end

-- End every chat for which keep(chat) is true with code.
function Client:end_chats(keep, code)
    local ids = {}
    for id, chat in pairs(self.chats) do
        if keep(chat) then ids[#ids + 1] = id end
    end
    table.sort(ids)
    for _, id in ipairs(ids) do self:finish(id, { type = "chat.error", id = id, code = code }) end
end

-- Pairing answers (protocol/v1.md "Pairing"): the code to show, then the key (the session goes on with a
-- hello carrying it) or a refusal (a close 4001 follows).
function Client:paired(frame)
    if frame.type == "pair.pending" then
        self.log("pairing: waiting for the player's click, code " .. tostring(frame.code))
        self:call(self.on_pair and function() self.on_pair(frame.code, frame.expiresInSeconds) end)
    elseif frame.type == "pair.granted" and type(frame.key) == "string" then
        self.token, self.pairing = frame.key, nil
        self.log("paired")
        self:call(self.on_key, frame.key)
        local opening = { self:hello_frame() }
        if self.last_context then opening[2] = { type = "state.update", modelContext = self.last_context } end
        for _, f in ipairs(self.queue) do
            if f.type ~= "state.update" then opening[#opening + 1] = f end
        end
        self.queue = opening
    else
        self.pair_refused = frame.type == "pair.denied" and "pair_denied" or "pair_expired"
        self.log("pairing refused: " .. frame.type)
    end
end

-- A refusal that names installId: a server older than the field (or one that judged it).
local function names_install(frame)
    for _, field in ipairs(type(frame.fields) == "table" and frame.fields or {}) do
        if field == "installId" then return true end
    end
    return false
end

function Client:dispatch(frame)
    if self.pairing and type(frame.type) == "string" and frame.type:sub(1, 5) == "pair." then
        return self:paired(frame)
    end
    if self.pairing and frame.type == "error" and frame.id == self.pairing then
        -- pair_busy: another copy of this mod is pairing now (its key comes to the shared
        -- persistent strings, key_source finds it); any other refusal: try again the same way.
        if self.install_id and names_install(frame) then
            -- A server older than installId (an unknown field to it): ask again without it.
            self.log("the server does not know installId: pairing without it")
            self.install_id = nil
        elseif frame.code == "pair_busy" then
            if not self.pair_busy then self.log("another copy of this mod is pairing; trying again with backoff") end
            self.pair_busy = true
        else
            self.log("pair request refused: " .. tostring(frame.code))
        end
        -- This session is left to its hello deadline; the next call opens a new one.
        self.pairing, self.session, self.want_hello = nil, nil, true
        self:backoff()
        return
    end
    if frame.type == "server.hello" then
        self.hello, self.attempt, self.pair_busy = frame, 0, nil
        self.last_beat = self.now()
        self.log("server.hello, heartbeat every " .. frame.heartbeatMs .. " ms")
    end
    if frame.origin == "companion" then return self:companion(frame) end
    local chat = frame.id and self.chats[frame.id]
    if chat then
        if frame.type == "chat.delta" then
            self:call(chat.handlers.delta, frame.text)
        elseif frame.type == "voice.transcript" then
            self:call(chat.handlers.transcript and function()
                chat.handlers.transcript(frame.text, frame.final == true)
            end)
        elseif frame.type == "voice.error" and not VOICE_GOES_ON[frame.code] then
            self:finish(frame.id, { type = "chat.error", id = frame.id, code = frame.code, message = frame.message })
        elseif frame.type == "chat.done" or frame.type == "chat.error" or frame.type == "error" then
            self:finish(frame.id, frame)
        end
        return
    end
    local ok, problem = pcall(self.on_frame, frame)
    if not ok then self.log("on_frame failed: " .. tostring(problem)) end
end

function Client:backoff()
    self.attempt = self.attempt + 1
    local wait = math.min(self.backoff_cap, self.backoff_base * 2 ^ math.min(self.attempt - 1, 10))
    self.retry_at = self.now() + wait * (1 - 0.2 * self.random())
end

-- The session is over (closed by the server, or its handle unknown): chats it took are lost,
-- chats not yet sent wait for the next session, and a new hello follows unless the close is final.
function Client:ended(code, reason)
    self.closed, self.session, self.hello, self.pairing = code, nil, nil, nil
    self.log("session closed " .. tostring(code) .. " " .. tostring(reason or ""))
    self:end_chats(function(chat) return chat.sent end, "connection_lost")
    if FINAL[code] then
        self.want_hello, self.stopped = false, code
        local why = code == 4001 and (self.pair_refused or "unauthorized") or "closed"
        if why == "unauthorized" then
            local refused = self.token
            self.token = nil
            self:call(self.on_key_refused, refused)
        end
        self:end_chats(function() return true end, why)
        return
    end
    self.want_hello = true
    self:backoff()
end

-- Chats past their bound end now.
function Client:expire(now)
    local outage_over = self.outage and now - self.outage >= self.outage_grace
    if outage_over then self:end_chats(function() return true end, "no_server") end
    local late = {}
    for id, chat in pairs(self.chats) do
        if now >= chat.deadline then late[#late + 1] = id end
    end
    for _, id in ipairs(late) do
        if self.chats[id].sent and self.session then self:cancel(id) end
        self:finish(id, { type = "chat.error", id = id, code = "timeout" })
    end
end

-- The frames of the next call: with no session, a hello first, the last state and the chats
-- still waiting (a state.update or cancel of the old session is not carried over).
function Client:frames()
    if self.pairing then
        -- Polls until the player's click; the queue waits. Meanwhile another copy of this mod
        -- sharing the persistent strings may keep a key (the server answers each copy's request
        -- with its own code): then this request is left to lapse and the next call says hello.
        if not self:kept_key() then return {} end
        self.pairing, self.session = nil, nil
    end
    local frames = self.queue
    self.queue = {}
    if self.session then return frames end
    self:kept_key()
    if not self.token or self.token == "" then
        -- No key yet: this call asks to pair; the queued frames wait for the hello.
        self.queue = frames
        return { self:pair_frame() }
    end
    local opening = { self:hello_frame() }
    if self.last_context then opening[2] = { type = "state.update", modelContext = self.last_context } end
    -- A typing hint was for the session that ended: the draft has moved on, or was sent.
    local stale = { ["state.update"] = true, ["chat.cancel"] = true, ["chat.typing"] = true }
    for _, frame in ipairs(frames) do
        if frame.type == "chat.send" and self.chats[frame.id] then opening[#opening + 1] = frame
        elseif not stale[frame.type] then opening[#opening + 1] = frame end
    end
    return opening
end

-- With no key yet, the key another copy of this mod kept (key_source), taken as this one's.
function Client:kept_key()
    if (self.token and self.token ~= "") or not self.key_source then return false end
    local ok, kept = pcall(self.key_source)
    if ok and type(kept) == "string" and kept ~= "" then
        self.token = kept
        self.log("another copy of this mod paired: its key, no second pairing")
        return true
    end
    return false
end

-- Make one call if none is in flight and none is due later: the queued frames (and a
-- heartbeat when due), waiting up to wait_ms for the answer's first frame. done() is called
-- once the answer was handled. Call it often from a static (pause-proof) periodic task.
function Client:pump(wait_ms, done)
    local now = self.now()
    self:expire(now)
    -- A hint is news for the open session only; it goes with the next call.
    local hint = self.session and self:due_hint(now)
    if hint then
        self:send({ type = "chat.typing", text = hint })
        self.hints = self.hints + 1
    end
    if self.busy then
        if now < self.busy_until then return false end
        -- QueryServer never called back: forget that call (a late answer is ignored).
        self.generation, self.busy = self.generation + 1, false
        self:unreachable("no answer", self.busy_frames)
    end
    if self.stopped or now < self.retry_at then return false end
    if not self.session and not self.want_hello then return false end
    local frames = self:frames()
    local beat_s = self.hello and self.hello.heartbeatMs / 1000
    if beat_s and now - self.last_beat >= beat_s then
        frames[#frames + 1] = { type = "heartbeat" }
        self.last_beat = now
    end
    local body = { frames = frames, waitMs = wait_ms or 0, session = self.session }
    local generation = self.generation
    self.busy, self.busy_until, self.busy_frames = true, now + (wait_ms or 0) / 1000 + self.call_timeout, frames
    self.query(self.url, function(result, ok, status)
        if generation ~= self.generation then return end
        self.busy = false
        self:answered(result, ok, status, frames)
        if done then done() end
    end, "POST", json.encode(body, true))
    return true
end

-- A call that reached no server: its frames wait for the next one, once per outage in the log.
function Client:unreachable(why, frames)
    local kept = {}
    for _, frame in ipairs(frames or {}) do
        if frame.type ~= "heartbeat" and frame.type ~= "adapter.hello" and frame.type ~= "adapter.pair" then kept[#kept + 1] = frame end
    end
    if not self.session then self.pairing = nil end
    for _, frame in ipairs(self.queue) do kept[#kept + 1] = frame end
    self.queue = kept
    if not self.outage then
        self.outage = self.now()
        self.log("no server at " .. self.url .. " (" .. why .. "); retrying with backoff")
    end
    if not self.session then self.hello = nil end
    self:backoff()
end

function Client:answered(result, ok, status, frames)
    -- Judged on the status code when there is one: a 404 is an answer, whatever isSuccessful says.
    if not status or status == 0 or status >= 500 then
        self:unreachable(tostring(status), frames)
        return
    end
    if self.outage then
        self.log("server reachable again after " .. math.floor(self.now() - self.outage) .. " s")
        self.outage = nil
    end
    if status == 404 then
        -- The handle is dead (expired, or the server restarted): its frames were not taken.
        for _, frame in ipairs(frames) do
            if frame.type == "chat.send" and self.chats[frame.id] then self:send(frame) end
        end
        self.log("session unknown to the server; opening a new one")
        self:ended(1006, "unknown session")
        self.attempt, self.retry_at = 0, 0
        return
    end
    local decoded, answer = pcall(json.decode, result or "")
    if status ~= 200 or not decoded or type(answer) ~= "table" then
        self.log("HTTP " .. tostring(status) .. ": " .. tostring(result))
        self:unreachable("HTTP " .. tostring(status), frames)
        return
    end
    self.session = answer.session
    for _, frame in ipairs(frames) do
        local chat = frame.type == "chat.send" and self.chats[frame.id]
        if chat then chat.sent = true end
    end
    for _, frame in ipairs(answer.frames or {}) do self:dispatch(frame) end
    if type(answer.closed) == "table" then self:ended(answer.closed.code, answer.closed.reason) end
end

return Client
