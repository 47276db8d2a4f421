-- Example DST mod skeleton: the adapter library (scripts/xty/) wired to the game.
-- Not run in CI (it needs the game): test/shim.lua runs scripts/xty/mod.lua, which holds all of
-- this file's logic but observe(), with lua5.1 and stand-ins of the few DST calls it makes.
local G = GLOBAL
local Mod = G.require("xty.mod")

local HOST = GetModConfigData("host") or "localhost"
local PORT = GetModConfigData("port") or 8765

local mod

-- The full observation; projection.project() cuts it per question.
local function observe()
    local player, world = G.ThePlayer, G.TheWorld
    local nearby = {}
    local x, y, z = player.Transform:GetWorldPosition()
    for _, ent in ipairs(G.TheSim:FindEntities(x, y, z, 20, nil, { "INLIMBO", "FX" })) do
        if ent ~= player and ent.prefab then
            nearby[#nearby + 1] = {
                kind = ent:HasTag("monster") and "monster" or ent:HasTag("structure") and "structure" or "thing",
                name = ent:GetDisplayName(),
                distance = math.floor(math.sqrt(player:GetDistanceSqToInst(ent))),
            }
        end
    end
    local inventory = {}
    for _, item in pairs(player.replica.inventory:GetItems()) do
        inventory[#inventory + 1] = { name = item:GetDisplayName(), count = item.replica.stackable and item.replica.stackable:StackSize() or 1 }
    end
    local health = player.replica.health
    -- The held item by its prefab and as the game shows it in the player's language.
    local held = player.replica.inventory:GetEquippedItem(G.EQUIPSLOTS.HANDS)
    local held_name = held and G.STRINGS.NAMES[string.upper(held.prefab)] or nil
    return {
        world = { location = world:HasTag("cave") and "Caves" or "Forest", time = world.state.phase,
                  season = world.state.season, weather = world.state.israining and "rain" or (world.state.issnowing and "snow" or "clear"),
                  day = world.state.cycles },
        player = { health = health and health:GetCurrent() or nil,
                   heldItem = held and held.prefab or nil, heldItemName = held_name,
                   status = { "sanity:" .. math.floor(player.replica.sanity:GetCurrent()), "hunger:" .. math.floor(player.replica.hunger:GetCurrent()) } },
        nearby = nearby,
        inventory = inventory,
        ui = { busy = G.TheFrontEnd:GetActiveScreen().name ~= "HUD" },
    }
end

AddSimPostInit(function()
    mod = Mod.start({
        sim = G.TheSim, world = G.TheWorld, now = G.GetStaticTime,   -- real time, also while paused
        -- No token: the mod pairs once (the player allows its code on the XiaoTangYuan page) and
        -- keeps its own key with TheSim:SetPersistentString (protocol/v1.md "Pairing").
        host = HOST, port = PORT, timezone = nil,
        -- The world's own stable features; the salt is made on first run and kept by TheSim.
        features = function() return { session = G.TheNet:GetSessionIdentifier(), seed = tostring(G.TheWorld.meta.seed) } end,
        observe = observe,
        log = function(line) print("[XiaoTangYuan] " .. line) end,
    })
end)

-- Call from your chat box / voice hook: on_text(text, finished) with the reply so far, or why
-- there is none (Chinese first, English beside).
G.XTY_ASK = function(question, on_text, source)
    return mod and mod.ask(question, on_text, source)
end

-- Call from your chat box as the player types (every key, or every frame it is open), with the
-- text as it stands: XiaoTangYuan looks up its memories for the question while the player pauses,
-- so the reply to XTY_ASK starts sooner. The client sends it only on a pause.
G.XTY_TYPING = function(draft)
    if mod then mod.typing(draft) end
end

-- From the console, when the default address does not work (see README "Try first"):
-- XTY_SET_URL("http://127.0.0.1:8765/v1/http"); XTY_SET_URL("") goes back to host and port.
G.XTY_SET_URL = function(url)
    G.TheSim:SetPersistentString(Mod.URL_KEY, url or "", false, function() end)
    print("[XiaoTangYuan] the server address takes effect the next time the world loads")
end
