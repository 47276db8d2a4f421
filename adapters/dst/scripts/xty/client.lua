-- One protocol/v1 session over POST /v1/http (v1.md "HTTP transport"), for DST's mod Lua.
--
--   local client = Client.new{
--       url = "http://127.0.0.1:8765/v1/http",
--       token = GetModConfigData("token"),
--       identity = { gameId = "dont-starve-together", saveId = id, saveName = "Wilson's world" },
--       adapter = { name = "XTY DST", version = "1.0.0" },
--       timezone = "Asia/Shanghai",
--       query = function(url, callback, method, body) TheSim:QueryServer(url, callback, method, body) end,
--       now = GetTime,                        -- seconds, real time (GetStaticTime while paused)
--   }
--   client:connect()
--   TheWorld:DoPeriodicTask(1, function() client:pump(0) end)   -- or pump from each callback
--
-- Every call carries the queued frames, plus a heartbeat when heartbeatMs has passed since the
-- last one (a poll without frames is not a heartbeat), and takes the server frames queued since
-- the last call. One call is in flight at a time. A closed session (its "closed" code, or a 404)
-- is opened again with a new hello after the close codes worth it, with backoff.
local json = require("xty.json")

local Client = {}
Client.__index = Client

local RETRY = { [1001] = true, [1006] = true, [1011] = true, [1012] = true, [1013] = true, [4002] = true, [4003] = true }

function Client.new(opts)
    local self = setmetatable({}, Client)
    self.url, self.token, self.identity = opts.url, opts.token, opts.identity
    self.adapter, self.timezone = opts.adapter, opts.timezone
    self.query, self.now = opts.query, opts.now
    self.log = opts.log or function() end
    self.on_frame = opts.on_frame or function() end   -- every server frame no chat claimed
    self.queue, self.chats, self.next_id = {}, {}, 0
    self.session, self.hello, self.busy, self.closed = nil, nil, false, nil
    self.last_beat, self.retry_at, self.attempt = 0, 0, 0
    return self
end

function Client:id(kind)
    self.next_id = self.next_id + 1
    return kind .. "-" .. self.next_id
end

function Client:connect()
    self.session, self.hello, self.closed = nil, nil, nil
    self.queue = { {
        type = "adapter.hello", id = self:id("hello"), protocol = "v1",
        adapter = self.adapter, identity = self.identity, token = self.token,
        capabilities = { image = false, voice = false }, timezone = self.timezone,
    } }
end

-- Queue a client frame for the next call.
function Client:send(frame) self.queue[#self.queue + 1] = frame end

function Client:update_state(model_context, identity)
    if identity then self.identity = identity end
    self.last_context = model_context
    self:send({ type = "state.update", modelContext = model_context, identity = identity })
end

-- One player turn: handlers.delta(text), handlers.done(frame), handlers.error(frame). Returns the id.
function Client:chat(text, model_context, handlers)
    local id = self:id("chat")
    self.chats[id] = handlers or {}
    local frame = { type = "chat.send", id = id, text = text, source = "text" }
    if model_context then frame.context = { modelContext = model_context } end
    self:send(frame)
    return id
end

function Client:cancel(id) self:send({ type = "chat.cancel", id = id }) end

function Client:dispatch(frame)
    if frame.type == "server.hello" then
        self.hello, self.attempt = frame, 0
        self.last_beat = self.now()
        self.log("server.hello, heartbeat every " .. frame.heartbeatMs .. " ms")
    end
    local chat = frame.id and self.chats[frame.id]
    if chat then
        if frame.type == "chat.delta" then
            if chat.delta then chat.delta(frame.text) end
            return
        end
        self.chats[frame.id] = nil
        if frame.type == "chat.done" then
            if chat.done then chat.done(frame) end
        elseif chat.error then
            chat.error(frame)
        end
        return
    end
    self.on_frame(frame)
end

function Client:ended(code, reason)
    self.closed = code
    self.log("session closed " .. tostring(code) .. " " .. tostring(reason or ""))
    for id, chat in pairs(self.chats) do
        if chat.error then chat.error({ type = "chat.error", id = id, code = "connection_lost" }) end
    end
    self.chats = {}
    if RETRY[code] and self.hello then
        self.attempt = self.attempt + 1
        self.retry_at = self.now() + math.min(30, 2 ^ (self.attempt - 1))
        self.reopen = true
    end
end

-- Make one call if none is in flight: the queued frames (and a heartbeat when due), waiting up
-- to wait_ms for the answer's first frame. done() is called once the answer was handled.
function Client:pump(wait_ms, done)
    if self.busy then return false end
    if self.reopen and self.now() >= self.retry_at then
        self.reopen = false
        local context = self.last_context
        self:connect()
        if context then self:update_state(context) end
    end
    if self.closed and not self.session then return false end
    local frames = self.queue
    self.queue = {}
    local beat_s = self.hello and self.hello.heartbeatMs / 1000
    if beat_s and self.now() - self.last_beat >= beat_s then
        frames[#frames + 1] = { type = "heartbeat" }
        self.last_beat = self.now()
    end
    local body = { frames = frames, waitMs = wait_ms or 0, session = self.session }
    self.busy = true
    self.query(self.url, function(result, ok, status)
        self.busy = false
        self:answered(result, ok, status)
        if done then done() end
    end, "POST", json.encode(body, true))
    return true
end

function Client:answered(result, ok, status)
    if not ok or status == 0 then
        self.log("no server (" .. tostring(status) .. ")")
        self.retry_at = self.now() + 2
        return
    end
    local decoded, answer = pcall(json.decode, result or "")
    if status == 404 then
        self.session = nil
        self:ended(1006, "unknown session")
        return
    end
    if status ~= 200 or not decoded or type(answer) ~= "table" then
        self.log("HTTP " .. tostring(status) .. ": " .. tostring(result))
        return
    end
    self.session = answer.session
    for _, frame in ipairs(answer.frames or {}) do self:dispatch(frame) end
    if type(answer.closed) == "table" then
        self.session = nil
        self:ended(answer.closed.code, answer.closed.reason)
    end
end

return Client
