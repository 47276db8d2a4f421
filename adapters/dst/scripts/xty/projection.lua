-- project(observation, question, game) -> modelContext: the same rules and order as
-- xtyserver.adapter.project (docs/adapter-client.md "Projection"), from projection_rules.lua, a
-- copy of xtyserver/adapter/projection.json that a test keeps equal. Two differences, both
-- documented: lower-casing is ASCII-only (string.lower), and the server's forbidden-content
-- check (paths, keys, e-mail) is not repeated here.
local json = require("xty.json")
local M = {}

local rules = json.decode(require("xty.projection_rules"))
M.rules = rules

local SECTIONS = {
    world = { "location", "str", "time", "str", "season", "str", "weather", "str", "day", "count" },
    player = { "health", "gauge", "stamina", "gauge", "status", "strs", "heldItem", "str", "heldItemName", "str" },
    focus = { "kind", "str", "name", "str", "reachable", "bool" },
    ui = { "busy", "bool", "menu", "str" },
}
local ORDER = { "schemaVersion", "capturedAt", "world", "player", "focus", "nearby", "relevantItems", "ui" }

local function kind_of(section, name)
    local s = SECTIONS[section]
    for i = 1, #s, 2 do
        if s[i] == name then return s[i + 1] end
    end
end

-- Unicode code points of a UTF-8 string (the server's "chars").
function M.chars(s)
    local _, continuation = s:gsub("[\128-\191]", "")
    return #s - continuation
end

local function string_ok(s) return M.chars(s) <= rules.maxStringChars end

local function contains(text, word) return text:find(word, 1, true) ~= nil end

local function valid(kind, v)
    local t = type(v)
    if t == "boolean" then
        if kind == "bool" then return v end
        return nil
    end
    if kind == "str" then
        return (t == "string" and string_ok(v)) and v or nil
    elseif kind == "strs" then
        if t ~= "table" then return nil end
        local kept = {}
        for _, s in ipairs(v) do
            if type(s) == "string" and string_ok(s) and #kept < rules.maxStatus then kept[#kept + 1] = s end
        end
        return #kept > 0 and kept or nil
    elseif kind == "gauge" or kind == "distance" then
        local low = kind == "distance" and 0 or -1e9
        if t == "number" and v == v and v >= low and v <= 1e9 then return v end
    elseif kind == "count" then
        if t == "number" and math.floor(v) == v and v >= 0 and v <= 1e9 then return v end
    end
    return nil
end

function M.topics(question, game)
    -- A leading space before the question: a word " eat" matches only at a word's start.
    local text, found = " " .. question:lower(), {}
    for _, rule in ipairs(rules.games[game] or {}) do
        for _, word in ipairs(rule.words) do
            if contains(text, word) then found[#found + 1] = rule.topic; break end
        end
    end
    return found
end

local function matches(name, tags, words, topic)
    local low, tagged = name:lower(), {}
    for _, t in ipairs(tags) do if type(t) == "string" then tagged[t:lower()] = true end end
    if tagged[topic] then return true end
    for _, w in ipairs(words) do
        if contains(low, w) or tagged[w] then return true end
    end
    return false
end

local function list(v) return type(v) == "table" and v or {} end

local function nearby(observation, found)
    local entities = {}
    for i, raw in ipairs(list(observation.nearby)) do
        if type(raw) == "table" then
            local e, any = {}, false
            for _, f in ipairs({ { "kind", "str" }, { "name", "str" }, { "distance", "distance" } }) do
                local v = valid(f[2], raw[f[1]])
                if v ~= nil then e[f[1]] = v; any = true end
            end
            if any then entities[#entities + 1] = { e = e, i = i } end
        end
    end
    -- Closest first; the observation's order breaks ties (table.sort is not stable).
    table.sort(entities, function(x, y)
        local dx, dy = x.e.distance or math.huge, y.e.distance or math.huge
        if dx ~= dy then return dx < dy end
        return x.i < y.i
    end)
    local out = {}
    if #found == 0 then
        for i = 1, math.min(#entities, rules.general.nearby) do out[i] = entities[i].e end
        return out
    end
    local kinds, words = {}, {}
    for _, t in ipairs(found) do
        for _, k in ipairs(t.kinds) do kinds[k] = true end
        for _, w in ipairs(t.match) do words[#words + 1] = w end
    end
    for _, x in ipairs(entities) do
        if kinds[(x.e.kind or ""):lower()] or matches(x.e.name or "", {}, words, "") then out[#out + 1] = x.e end
    end
    return out
end

local function items(observation, found)
    local candidates = {}
    for _, key in ipairs({ "relevantItems", "inventory" }) do
        for _, raw in ipairs(list(observation[key])) do
            local name = type(raw) == "table" and valid("str", raw.name) or nil
            if name then
                candidates[#candidates + 1] = { item = { name = name, count = valid("count", raw.count) }, tags = list(raw.tags) }
            end
        end
    end
    local picked = {}
    if #found > 0 then
        for _, c in ipairs(candidates) do
            for _, t in ipairs(found) do
                if matches(c.item.name, c.tags, t.match, t.topic) then picked[#picked + 1] = c.item; break end
            end
        end
    else
        for i = 1, math.min(#candidates, rules.general.items) do picked[i] = candidates[i].item end
    end
    local wanted = {}
    for _, quest in ipairs(list(observation.quests)) do
        if type(quest) == "table" then
            for _, name in ipairs(list(quest.items)) do
                if type(name) == "string" then wanted[name:lower()] = true end
            end
        end
    end
    for _, c in ipairs(candidates) do
        if wanted[c.item.name:lower()] then picked[#picked + 1] = c.item end
    end
    local seen, out = {}, {}
    for _, item in ipairs(picked) do
        if not seen[item.name] then seen[item.name] = true; out[#out + 1] = item end
    end
    return out
end

local function copy(t)
    local out = {}
    for k, v in pairs(t) do out[k] = v end
    return out
end

local function with(context, path, value)
    local trial = copy(context)
    if path == "nearby" or path == "relevantItems" then
        local limit = path == "nearby" and rules.maxNearby or rules.maxItems
        local current = copy(context[path] or {})
        if #current >= limit then return nil end
        current[#current + 1] = value
        trial[path] = current
        return trial
    end
    local section, name = path:match("^(%w+)%.(%w+)$")
    local part = copy(context[section] or {})
    part[name] = value
    trial[section] = part
    return trial
end

function M.project(observation, question, game)
    local names, found = {}, {}
    for _, t in ipairs(M.topics(question, game)) do names[t] = true end
    for _, rule in ipairs(rules.games[game] or {}) do
        if names[rule.topic] then found[#found + 1] = rule end
    end
    local paths, seen = {}, {}
    local function add(path) if not seen[path] then seen[path] = true; paths[#paths + 1] = path end end
    if #found > 0 then
        for _, t in ipairs(found) do for _, f in ipairs(t.fields) do add(f) end end
    else
        for _, f in ipairs(rules.general.fields) do add(f) end
    end
    for _, f in ipairs(rules.always) do add(f) end

    local pieces = {}
    for _, path in ipairs(paths) do
        local section, name = path:match("^(%w+)%.(%w+)$")
        local part = observation[section]
        local v = nil
        if type(part) == "table" then v = valid(kind_of(section, name), part[name]) end
        if v ~= nil then pieces[#pieces + 1] = { path, v } end
    end
    for _, e in ipairs(nearby(observation, found)) do pieces[#pieces + 1] = { "nearby", e } end
    for _, i in ipairs(items(observation, found)) do pieces[#pieces + 1] = { "relevantItems", i } end

    local context = { schemaVersion = 1 }
    if type(observation.capturedAt) == "string" and string_ok(observation.capturedAt) then
        context.capturedAt = observation.capturedAt
    end
    for _, piece in ipairs(pieces) do
        local trial = with(context, piece[1], piece[2])
        if trial and json.size(trial) <= rules.targetBytes then context = trial end
    end
    return context
end

M.ORDER = ORDER
return M
