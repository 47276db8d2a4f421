-- A small DST world for scripts/xty/mod.lua under lua5.1 (test/shim.lua play ...): exactly the
-- calls the mod makes, with DST's timing rules. The world scheduler stops while the game is
-- paused; the static scheduler and GetStaticTime do not. QueryServer answers asynchronously,
-- as the game's does (the request itself is a real HTTP call made between ticks).
local M = {}

function M.play(arg, query_now, socket)
    local host, port, token, control, store = arg[2], tonumber(arg[3]), arg[4], arg[5], arg[6]
    local seed = arg[7] or "1714700000"   -- the world's seed: another world is another save
    local function out(line) io.write(line, "\n"); io.flush() end
    local started = socket.gettime()
    local paused, world_time, last = false, 0, started
    local blip_until = 0
    local talking = nil   -- the push-to-talk utterance held down ("talk" ... "release")
    local function static_time() return socket.gettime() - started end

    local tasks = {}
    local World = {}
    function World:DoPeriodicTask(period, fn) tasks[#tasks + 1] = { period = period, fn = fn, static = false, next = world_time + period } end
    function World:DoStaticPeriodicTask(period, fn) tasks[#tasks + 1] = { period = period, fn = fn, static = true, next = static_time() + period } end

    local pending = {}
    local Sim = {}
    function Sim:QueryServer(url, callback, method, body)
        pending[#pending + 1] = { url = url, callback = callback, method = method, body = body }
    end
    local function path(name) return store .. "/" .. name end
    function Sim:GetPersistentString(name, callback)
        local f = io.open(path(name), "rb")
        if not f then return callback(false, "") end
        local data = f:read("*a")
        f:close()
        callback(true, data)
    end
    function Sim:SetPersistentString(name, data, encode, callback)
        local f = assert(io.open(path(name), "wb"))
        f:write(data)
        f:close()
        out("persisted " .. name)
        if callback then callback(true) end
    end

    local observation, looked = require("xty.example").observation(), nil
    observation.world.time = "day"   -- "phase dusk" makes the evening come
    -- The world the mod's actions act on (xty.actions' game): an inventory, recipes, a menu.
    local menu_open = false
    local inventory = {
        { name = "斧头", prefab = "axe", count = 1 },
        { name = "肉", prefab = "meat", count = 2 },
        { name = "树枝", prefab = "twigs", count = 3 },
        { name = "采下的草", prefab = "cutgrass", count = 1 },
    }
    local needs = {
        torch = { { "cutgrass", 2, "采下的草" }, { "twigs", 2, "树枝" } },
        campfire = { { "cutgrass", 3, "采下的草" }, { "log", 2, "木头" } },
        axe = { { "twigs", 1, "树枝" }, { "flint", 1, "燧石" } },
        pickaxe = { { "twigs", 2, "树枝" }, { "flint", 2, "燧石" } },
        spear = { { "twigs", 2, "树枝" }, { "rope", 1, "绳子" }, { "flint", 1, "燧石" } },
    }
    local function have(prefab)
        for _, slot in ipairs(inventory) do if slot.prefab == prefab then return slot.count end end
        return 0
    end
    local game = {
        busy = function() if menu_open then return "菜单开着，先关掉菜单" end end,
        nearby = function() return observation.nearby end,
        point = function(thing) out("POINTED " .. thing.name) end,
        inventory = function() return inventory end,
        missing = function(recipe)
            local need = needs[recipe]
            if not need then return nil end
            local lacking = {}
            for _, n in ipairs(need) do
                if have(n[1]) < n[2] then lacking[#lacking + 1] = (n[2] - have(n[1])) .. "个" .. n[3] end
            end
            return lacking
        end,
        build = function(recipe) out("BUILT " .. recipe) end,
        drop = function(slot, count) slot.count = slot.count - count; out("DROPPED " .. slot.name .. " x" .. count) end,
    }
    local Mod = require("xty.mod")
    -- Short long-polls: this QueryServer blocks the loop while it waits, the game's does not.
    -- The state is observed every half second of world time (the game: every 2 s).
    Mod.WAIT_MS, Mod.OBSERVE_SECONDS = 100, 0.5
    local mod = Mod.start({
        sim = Sim, world = World, now = static_time, host = host, port = port, token = token,
        timezone = "Asia/Shanghai", save_name = "Wilson's world",
        features = function() return { session = "A1B2C3D4E5F60789", seed = seed } end,
        observe = function()
            -- Said when the mod first sees another phase: a test knows what it has seen.
            if looked ~= observation.world.time then
                looked = observation.world.time
                out("the mod sees " .. looked)
            end
            return observation
        end,
        log = function(line) out("[xty] " .. line) end,
        say = function(text) out("said: " .. text) end,
        speak = function(text, why) out("companion: " .. text); if why then out("why: " .. why) end end,
        client_options = { backoff_base = 0.2, backoff_cap = 2, outage_grace = 3, chat_timeout = 30 },
        game = game,
        on_action = function(name, _, status, text) out("action " .. name .. ": " .. status .. " " .. text) end,
    })
    local hello_seen
    local offset = 0
    local function commands()
        local f = io.open(control, "rb")
        if not f then return {} end
        f:seek("set", offset)
        local lines = {}
        for line in f:lines() do lines[#lines + 1] = line end
        offset = f:seek()
        f:close()
        return lines
    end

    while socket.gettime() - started < 600 do
        local now = socket.gettime()
        if not paused then world_time = world_time + (now - last) end
        last = now
        for _, task in ipairs(tasks) do
            local t = task.static and static_time() or world_time
            if (task.static or not paused) and t >= task.next then
                task.next = t + task.period
                task.fn()
            end
        end
        local calls = pending
        pending = {}
        for _, call in ipairs(calls) do
            if static_time() < blip_until then
                out("query failed (no network)")
                call.callback("", false, 0)
            else
                query_now(call.url, function(result, ok, status)
                    if status == 0 then out("query failed (" .. tostring(status) .. ")") end
                    call.callback(result, ok, status)
                end, call.method, call.body)
            end
        end
        local client = mod.client
        if client and client.hello ~= hello_seen then
            hello_seen = client.hello
            if hello_seen then out("session open " .. hello_seen.sessionId) end
        end
        for _, line in ipairs(commands()) do
            local verb, rest = line:match("^(%S+)%s*(.*)$")
            out("> " .. line)
            if verb == "pause" then paused = true
            elseif verb == "resume" then paused = false
            elseif verb == "blip" then blip_until = tonumber(rest) > 0 and static_time() + tonumber(rest) or 0
            elseif verb == "chat" then
                mod.ask(rest, function(text, finished, code)
                    if finished then out((code and "said (" .. code .. "): " or "reply: ") .. text) end
                end)
            elseif verb == "type" then mod.typing(rest)
            elseif verb == "menu" then menu_open = rest == "open"
            elseif verb == "talk" then
                talking = mod.talk(function(text, final)
                    out((final and "heard: " or "hearing: ") .. text)
                end, function(text, finished, code)
                    if finished then out((code and "said (" .. code .. "): " or "reply: ") .. text) end
                end)
            elseif verb == "release" then mod.release(talking)
            elseif verb == "phase" then observation.world.time = rest
            elseif verb == "health" then observation.player.health = tonumber(rest)
            elseif verb == "leave" then mod.stop()
            elseif verb == "quit" then return 0
            end
        end
        socket.sleep(0.02)
    end
    return 3
end

return M
