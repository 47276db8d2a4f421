-- Example DST mod skeleton: the adapter library (scripts/xty/) wired to the game.
-- Not run in CI (it needs the game); test/shim.lua runs the same library and scripts/xty/example.lua
-- with lua5.1 and a QueryServer done by a real HTTP request.
local G = GLOBAL
local Client = G.require("xty.client")
local projection = G.require("xty.projection")
local saveid = G.require("xty.saveid")

local GAME = "dont-starve-together"
local PORT = GetModConfigData("port") or 8765
local TOKEN = GetModConfigData("token")   -- xtyserver token show (or %LOCALAPPDATA%\XiaoTangYuan\token)
local SALT = GetModConfigData("salt")      -- once per install; never sent

local client

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
    return {
        world = { location = world:HasTag("cave") and "Caves" or "Forest", time = world.state.phase,
                  season = world.state.season, weather = world.state.israining and "rain" or (world.state.issnowing and "snow" or "clear"),
                  day = world.state.cycles },
        player = { health = health and health:GetCurrent() or nil,
                   status = { "sanity:" .. math.floor(player.replica.sanity:GetCurrent()), "hunger:" .. math.floor(player.replica.hunger:GetCurrent()) } },
        nearby = nearby,
        inventory = inventory,
        ui = { busy = G.TheFrontEnd:GetActiveScreen().name ~= "HUD" },
    }
end

AddSimPostInit(function()
    local id = saveid.derive({ session = G.TheNet:GetSessionIdentifier(), seed = tostring(G.TheWorld.meta.seed) }, SALT)
    client = Client.new({
        url = "http://127.0.0.1:" .. PORT .. "/v1/http",
        token = TOKEN,
        identity = { gameId = GAME, saveId = id },
        adapter = { name = "XTY DST", version = "0.1.0" },
        timezone = nil,
        query = function(url, cb, method, body) G.TheSim:QueryServer(url, cb, method, body) end,
        now = G.GetStaticTime,   -- real time, also while paused: heartbeats go on
    })
    client:connect()
    -- One call in flight at a time; each long-polls up to 1 s and carries heartbeats when due.
    G.TheWorld:DoPeriodicTask(0.5, function() client:pump(1000) end)
    G.TheWorld:DoPeriodicTask(2, function() client:update_state(projection.project(observe(), "", GAME)) end)
end)

-- Call from your chat box / voice hook.
G.XTY_ASK = function(question, on_text)
    local reply = {}
    client:chat(question, projection.project(observe(), question, GAME), {
        delta = function(text) reply[#reply + 1] = text; on_text(table.concat(reply)) end,
        error = function(frame) on_text("(" .. frame.code .. ")") end,
    })
end
