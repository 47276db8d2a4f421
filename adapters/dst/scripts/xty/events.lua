-- Game events the DST mod reports (v1.md "game.event"): what changed between two observations.
--
--   local watch = Events.new()
--   for _, e in ipairs(watch:changes(observation)) do client:event(e.kind, e.facts) end
--
-- Each event fires when its condition starts, never again while it holds (dusk once per
-- evening, low health once until it recovers, a boss once while it stays near). The first
-- observation only sets what "before" was: loading a world at dusk says nothing.
local M = {}
M.__index = M

M.LOW_HEALTH = 30     -- health at or under this is low
M.LOW_SANITY = 30     -- sanity at or under this is low (from the "sanity:N" status)
M.BOSS_RANGE = 30     -- a boss within this many units is near

function M.new() return setmetatable({ seen = false, was = {} }, M) end

local function sanity(observation)
    for _, status in ipairs((observation.player or {}).status or {}) do
        local value = tostring(status):match("^sanity:(%-?[%d.]+)$")
        if value then return tonumber(value) end
    end
    return nil
end

local function boss(observation)
    for _, entity in ipairs(observation.nearby or {}) do
        if entity.kind == "boss" and (entity.distance or 0) <= M.BOSS_RANGE then return entity end
    end
    return nil
end

-- The events that started since the last observation: { { kind = ..., facts = {...} }, ... }.
function M:changes(observation)
    local world, player = observation.world or {}, observation.player or {}
    local now = {
        dusk = world.time == "dusk",
        low_health = player.health ~= nil and player.health <= M.LOW_HEALTH,
        low_sanity = (sanity(observation) or 100) <= M.LOW_SANITY,
        boss = boss(observation),
    }
    local events = {}
    if self.seen then
        local was = self.was
        if now.dusk and not was.dusk then
            events[#events + 1] = { kind = "night_falling", facts = { place = world.location, count = world.day } }
        end
        if now.low_health and not was.low_health then
            events[#events + 1] = { kind = "health_low", facts = { value = player.health } }
        end
        if now.low_sanity and not was.low_sanity then
            events[#events + 1] = { kind = "sanity_low", facts = { value = sanity(observation) } }
        end
        if now.boss and not was.boss then
            events[#events + 1] = { kind = "boss_near", facts = { subject = now.boss.name, value = now.boss.distance } }
        end
    end
    self.seen, self.was = true, now
    return events
end

return M
