-- Game actions XiaoTangYuan may take in DST (v1.md "Actions"): point_to (look), craft (act) and
-- drop_item (risky: the server asks the player first, and the request then says confirmed).
-- Each checks its preconditions against the mod's full view of the game (not the small
-- modelContext) and refuses with a reason the player can read; the mod has the last word.
--
--   local Actions = require("xty.actions")
--   Actions.attach(client, game)       -- before client:connect(): the hello declares them
--
-- game: the mod's hands on the world (modmain.lua maps them to DST's API):
--   busy()               -> why nothing may be done now (a menu, a ghost, a cutscene) or nil
--   nearby()             -> { { name=, prefab=, distance=, entity= }, ... } around the player
--   point(entity)        -> show it to the player (a marker, the camera)
--   inventory()          -> { { name=, prefab=, count=, item= }, ... }
--   missing(recipe)      -> what is lacking to build it ({ "2 Twigs", ... }; {} when buildable),
--                           or nil for an unknown recipe
--   build(recipe)        -> start building it
--   drop(item, count)    -> drop count of it at the player's feet
local Actions = {}

-- The recipes craft offers (DST prefab names), with their names in Chinese.
Actions.RECIPES = { torch = "火把", campfire = "营火", axe = "斧头", pickaxe = "鹤嘴锄", spear = "长矛" }
Actions.POINT_RANGE = 30   -- farther than this is not "nearby" for pointing

local function recipes()
    local names = {}
    for name in pairs(Actions.RECIPES) do names[#names + 1] = name end
    table.sort(names)
    return names
end

-- What the hello declares (actions.declare replaces them later, v1.md "Actions").
function Actions.declarations()
    return {
        {
            name = "point_to", risk = "look",
            description = "指给玩家看附近的一个东西", descriptionEn = "point at something nearby",
            parameters = { properties = { target = { type = "string", maxLength = 40, description = "附近东西的名字" } }, required = { "target" } },
        },
        {
            name = "craft", risk = "act", cooldownMs = 2000,
            description = "制作一件物品（材料够时）", descriptionEn = "craft an item (when the materials are there)",
            parameters = { properties = { recipe = { type = "string", enum = recipes(), description = "配方" } }, required = { "recipe" } },
        },
        {
            name = "drop_item", risk = "risky",
            description = "把物品栏里的东西丢到地上", descriptionEn = "drop an item from the inventory",
            parameters = {
                properties = {
                    item = { type = "string", maxLength = 40, description = "物品名" },
                    count = { type = "integer", minimum = 1, maximum = 40, description = "数量" },
                },
                required = { "item" },
            },
        },
    }
end

local function matches(thing, name)
    return thing.name == name or thing.prefab == name
end

-- Run one action.request: returns status ("done", "refused", "failed") and a short text.
function Actions.run(game, name, args, confirmed)
    local busy = game.busy()
    if busy then return "refused", busy end
    if name == "point_to" then
        local best
        for _, thing in ipairs(game.nearby()) do
            if matches(thing, args.target) and (not best or thing.distance < best.distance) then best = thing end
        end
        if not best then return "refused", "附近没有" .. tostring(args.target) end
        if best.distance > Actions.POINT_RANGE then return "refused", tostring(args.target) .. "太远了，看不到" end
        game.point(best.entity or best)
        return "done", "已经指向" .. best.name
    elseif name == "craft" then
        local missing = game.missing(args.recipe)
        if missing == nil then return "refused", "不会做" .. tostring(args.recipe) end
        if #missing > 0 then
            return "refused", "材料不够做" .. (Actions.RECIPES[args.recipe] or args.recipe) .. "：还差" .. table.concat(missing, "、")
        end
        game.build(args.recipe)
        return "done", "开始制作" .. (Actions.RECIPES[args.recipe] or args.recipe)
    elseif name == "drop_item" then
        -- The server sends a risky action only after the player's yes; never without it.
        if not confirmed then return "refused", "没有得到玩家的同意" end
        local count = args.count or 1
        for _, slot in ipairs(game.inventory()) do
            if matches(slot, args.item) then
                if slot.count < count then return "refused", "只有" .. slot.count .. "个" .. slot.name end
                game.drop(slot.item or slot, count)
                return "done", "丢下了" .. count .. "个" .. slot.name
            end
        end
        return "refused", "物品栏里没有" .. tostring(args.item)
    end
    return "refused", "这个游戏没有这个动作"
end

-- Declare the actions in the client's hello and answer its action.request frames. on_run(name,
-- args, status, text), if given, is told of each.
function Actions.attach(client, game, on_run)
    client.actions = Actions.declarations()
    local previous = client.on_frame
    client.on_frame = function(frame)
        if frame.type == "action.request" then
            local ok, status, text = pcall(Actions.run, game, frame.name, frame.args or {}, frame.confirmed == true)
            if not ok then status, text = "failed", "出错了" end
            text = tostring(text or "")
            -- At most 200 characters on the wire: cut by bytes, never inside a character.
            if #text > 400 then text = text:sub(1, 400):gsub("[\192-\255][\128-\191]*$", "") end
            client:send({ type = "action.result", id = frame.id, status = status, text = text })
            if on_run then on_run(frame.name, frame.args or {}, status, text) end
        elseif frame.type ~= "actions.declared" then
            previous(frame)
        end
    end
end

return Actions
