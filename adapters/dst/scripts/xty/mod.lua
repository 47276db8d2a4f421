-- The mod's wiring, without DST's globals: modmain.lua passes the game's objects in, and
-- test/shim.lua passes stand-ins of exactly these (TheSim's persistent strings and QueryServer,
-- the world's two schedulers, GetStaticTime).
--
-- The pump runs on the static scheduler (DoStaticPeriodicTask), which keeps running while the
-- game is paused: heartbeats go on and a pause does not end the session (4003). The state is
-- observed on the world's own scheduler (DoPeriodicTask): nothing changes while paused.
local Client = require("xty.client")
local Actions = require("xty.actions")
local Events = require("xty.events")
local projection = require("xty.projection")
local saveid = require("xty.saveid")

local M = {}
M.GAME = "dont-starve-together"
M.SALT_KEY = "xiaotangyuan_salt"   -- the per-install salt of saveId (never sent)
M.URL_KEY = "xiaotangyuan_url"     -- optional: a base URL that replaces host and port
M.KEY_KEY = "xiaotangyuan_key"     -- the key pairing gave this mod (protocol/v1.md "Pairing")
M.INSTALL_KEY = "xiaotangyuan_install" -- this install's random id, sent when pairing ("Keys per install")
M.PUMP_SECONDS, M.OBSERVE_SECONDS, M.WAIT_MS = 0.25, 2, 1000

function M.base_url(host, port)
    return "http://" .. (host or "localhost") .. ":" .. tostring(port or 8765) .. "/v1/http"
end

local function valid_salt(data)
    return type(data) == "string" and #data == 32 and data:match("^%x+$") ~= nil
end

-- done(salt, made): the stored salt, or a new one made and stored now (first run).
function M.load_salt(sim, entropy, done)
    sim:GetPersistentString(M.SALT_KEY, function(ok, data)
        if ok and valid_salt(data) then return done(data, false) end
        local salt = saveid.new_salt(entropy)
        sim:SetPersistentString(M.SALT_KEY, salt, false, function() end)
        done(salt, true)
    end)
end

-- done(id): this install's id, made at random on first use and kept in the persistent strings
-- beside the key (32 hex digits, like the salt but never the salt: the salt is never sent).
-- Persistent strings are per Klei account folder, so two Steam accounts on one PC are two
-- installs with a key each; two copies of the mod under one account share one.
function M.load_install(sim, entropy, done)
    sim:GetPersistentString(M.INSTALL_KEY, function(ok, data)
        if ok and valid_salt(data) then return done(data) end
        local id = saveid.new_salt("install " .. tostring(entropy))
        sim:SetPersistentString(M.INSTALL_KEY, id, false, function() end)
        done(id)
    end)
end

-- The key kept in the game's persistent strings (shared by every copy of the mod), or nil.
-- GetPersistentString answers at once (a local file); one that answers later counts as none.
function M.kept_key(sim)
    local key
    sim:GetPersistentString(M.KEY_KEY, function(found, kept)
        if found and type(kept) == "string" and kept:match("^[%w_-]+$") then key = kept end
    end)
    return key
end

-- env: sim, world, now (GetStaticTime), host, port, token (tests and tools only: a DST mod cannot
-- read the server's token; else the kept key;
-- else the mod pairs), features() (the world's stable features), observe() (the full
-- observation), log(line), say(text) (shown to the player), adapter, timezone, save_name,
-- client_options (extra Client.new options), game (xty.actions' hands on the world: with it the
-- mod declares point_to, craft and drop_item), on_action(name, args, status, text), speak(text, why)
-- (the companion speaking up, why it spoke; default: say). Returns the mod: mod.ask(question, on_text, source),
-- mod.typing(draft) (the chat box as the player types), mod.talk(on_heard, on_text) and
-- mod.release(id) (push-to-talk), and mod.stop().
function M.start(env)
    local mod = { log = env.log or function() end }
    local say = env.say or mod.log
    local speak = env.speak or function(text, why) say(text); if why then say(why) end end
    local watch = Events.new()
    local function begin(url, salt, key, install)
        local save_id = saveid.derive(env.features(), salt)
        local options = {
            url = url, token = key, install_id = install,
            on_pair = function(code) say(Client.pair_prompt(code)) end,
            on_key = function(k) env.sim:SetPersistentString(M.KEY_KEY, k, false, function() end) end,
            -- Only the refused key: persistent strings are shared by every mod of this game, and
            -- another copy of this mod may have kept a newer key since.
            on_key_refused = function(refused)
                env.sim:GetPersistentString(M.KEY_KEY, function(ok, kept)
                    if not ok or kept == refused or refused == nil then
                        env.sim:SetPersistentString(M.KEY_KEY, "", false, function() end)
                    end
                end)
            end,
            key_source = function() return M.kept_key(env.sim) end,
            identity = { gameId = M.GAME, saveId = save_id, saveName = env.save_name },
            adapter = env.adapter or { name = "XTY DST", version = "0.1.0" },
            timezone = env.timezone, now = env.now, log = mod.log,
            query = function(u, cb, method, body) env.sim:QueryServer(u, cb, method, body) end,
            -- The companion speaking up about an event: shown once its line is whole, with why
            -- it spoke and how to turn it off (show it smaller, under the line).
            on_companion = function(text, finished, why) if finished and text ~= "" then speak(text, why) end end,
            -- A refused frame is the mod author's to fix: in the log, with the fields named.
            on_frame = function(frame)
                if frame.type == "error" then
                    mod.log("refused: " .. tostring(frame.code) .. " " .. tostring(frame.message))
                end
            end,
        }
        for k, v in pairs(env.client_options or {}) do options[k] = v end
        mod.client = Client.new(options)
        if env.game then Actions.attach(mod.client, env.game, env.on_action) end
        mod.log("saveId " .. save_id .. ", server " .. url)
        mod.client:connect()
        env.world:DoStaticPeriodicTask(M.PUMP_SECONDS, function() mod.client:pump(M.WAIT_MS) end)
        env.world:DoPeriodicTask(M.OBSERVE_SECONDS, function()
            local observation = env.observe()
            mod.client:update_state(projection.project(observation, "", M.GAME))
            -- Dusk, low health or sanity, a boss near: the server decides whether to speak up.
            for _, event in ipairs(watch:changes(observation)) do
                if mod.client:event(event.kind, event.facts) then mod.log("event " .. event.kind) end
            end
        end)
    end
    env.sim:GetPersistentString(M.URL_KEY, function(ok, stored)
        local url = (ok and type(stored) == "string" and stored:match("^https?://")) and stored
            or M.base_url(env.host, env.port)
        M.load_salt(env.sim, tostring(env.now()), function(salt, made)
            if made then mod.log("made this install's salt") end
            M.load_install(env.sim, tostring(env.now()), function(install)
                begin(url, salt, M.kept_key(env.sim) or (env.token ~= "" and env.token) or nil, install)
            end)
        end)
    end)

    -- One player turn: on_text(text) with the reply so far, then its end; on an error the
    -- player is told why (Client.explain). Returns the chat id.
    function mod.ask(question, on_text, source)
        if not mod.client then
            on_text(Client.explain("no_server"))
            return nil
        end
        local reply = {}
        return mod.client:chat(question, projection.project(env.observe(), question, M.GAME), {
            delta = function(text) reply[#reply + 1] = text; on_text(table.concat(reply), false) end,
            done = function(frame) on_text(frame.text or table.concat(reply), true) end,
            error = function(frame) on_text(Client.explain(frame), true, frame.code) end,
        }, source)
    end

    -- Push-to-talk pressed: on_heard(text, final) with what the server's microphone heard,
    -- then on_text as for mod.ask. Returns the id for mod.release(id) when the key goes up.
    function mod.talk(on_heard, on_text)
        if not mod.client then
            on_text(Client.explain("no_server"), true, "no_server")
            return nil
        end
        mod.client:update_state(projection.project(env.observe(), "", M.GAME))
        local reply = {}
        return mod.client:voice_start({
            transcript = on_heard,
            delta = function(text) reply[#reply + 1] = text; on_text(table.concat(reply), false) end,
            done = function(frame) on_text(frame.text or table.concat(reply), true) end,
            error = function(frame) on_text(Client.explain(frame), true, frame.code) end,
        })
    end

    -- The player is typing draft into the mod's chat box: call it on every key (or every frame
    -- the box is open); the client hints it to the server once the player pauses.
    function mod.typing(draft)
        if mod.client then mod.client:typing(draft) end
    end

    function mod.release(id)
        if mod.client and id then mod.client:voice_stop(id) end
    end

    function mod.stop()
        if mod.client then mod.client:stop() end
    end

    return mod
end

return M
