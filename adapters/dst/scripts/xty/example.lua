-- The example mod's logic, without DST's globals: modmain.lua calls it inside the game, and
-- test/shim.lua runs it with lua5.1 against a real server (QueryServer done by LuaSocket).
local json = require("xty.json")
local saveid = require("xty.saveid")
local projection = require("xty.projection")
local Client = require("xty.client")

local M = {}
local GAME = "dont-starve-together"

-- What the mod reads from the world (DST: ThePlayer.components..., TheWorld.state...).
function M.observation(now)
    return {
        world = { location = "Forest", time = "dusk", season = "winter", weather = "snow", day = 23 },
        player = { health = 62, stamina = 80, status = { "sanity:45", "freezing" }, heldItem = "spear", heldItemName = "长矛" },
        focus = { kind = "structure", name = "Fire Pit", reachable = true },
        nearby = {
            { kind = "monster", name = "Hound", distance = 14 },
            { kind = "monster", name = "Spider", distance = 6 },
            { kind = "bush", name = "Berry Bush", distance = 3 },
            { kind = "fire", name = "Fire Pit", distance = 1 },
        },
        inventory = {
            { name = "Log Suit", count = 1, tags = { "armor" } },
            { name = "Meat", count = 2, tags = { "food" } },
            { name = "Healing Salve", count = 1 },
        },
        ui = { busy = false },
    }
end

-- env: url, token, salt, query (QueryServer-shaped), now (seconds), print.
function M.run(env)
    local out = env.print or print
    -- The world's own stable features (DST: TheNet:GetSessionIdentifier(), TheWorld.meta.seed).
    local save_id = saveid.derive({ session = "A1B2C3D4E5F60789", seed = "1714700000" }, env.salt)
    out("saveId " .. save_id)
    local stats
    local client = Client.new({
        url = env.url, token = env.token,
        identity = { gameId = GAME, saveId = save_id, saveName = "Wilson's world" },
        adapter = { name = "XTY DST", version = "0.1.0" }, timezone = "Asia/Shanghai",
        query = env.query, now = env.now,
        on_frame = function(frame)
            if frame.type == "stats.result" then stats = frame
            elseif frame.type == "error" then out("<- error " .. frame.code .. " " .. frame.message) end
        end,
        log = function(line) out("[xty] " .. line) end,
    })
    client:connect()
    client:pump(0)
    if not client.hello then out("failed: no server.hello"); return 1 end
    out("<- server.hello heartbeatMs " .. client.hello.heartbeatMs)

    local observation = M.observation()
    local state = projection.project(observation, "", GAME)
    client:update_state(state)
    client:send({ type = "stats.get", id = "stats-1" })
    out("-> state.update " .. json.size(state) .. " bytes, stats.get")
    for _ = 1, 10 do
        if stats then break end
        client:pump(1000)
    end
    out("<- stats.result " .. (stats and #stats.saves or "none") .. " save(s)")

    local question = "附近危险吗？"
    local context = projection.project(observation, question, GAME)
    out("-> chat.send " .. question .. " topics " .. table.concat(projection.topics(question, GAME), ",") ..
        " modelContext " .. json.encode(context))
    local finished, polls, deltas = nil, 0, 0
    client:chat(question, context, {
        delta = function(text) deltas = deltas + 1; out("<- chat.delta " .. text) end,
        done = function(frame) finished = frame; out("<- chat.done context " .. frame.context .. ": " .. frame.text) end,
        error = function(frame) finished = frame; out("<- chat.error " .. frame.code) end,
    })
    local started = env.now()
    while not finished and env.now() - started < 30 do
        client:pump(1000)
        polls = polls + 1
    end
    out("polls " .. polls .. ", deltas " .. deltas)
    return (finished and finished.type == "chat.done") and 0 or 1
end

return M
