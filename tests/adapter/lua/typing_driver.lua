-- Test driver: the DST client's typing hints on a clock this script moves, against a real server.
--   lua5.1 typing_driver.lua ADAPTERS_DST_DIR URL TOKEN SAVE_ID
-- The mod's rhythm: pump() every 250 ms of the clock (its static periodic task), keys between.
-- It types a burst (60 keys 20 ms apart, then a pause), the same draft again, the same text
-- retyped key by key, and six IME phrases 400 ms apart, then a pause. Prints each hint the client
-- queued ("hint at MS: DRAFT", MS on this clock), a line per step, and the chat.typing frames the
-- calls carried ("chat.typing frames N"), counted in the request bodies.
package.path = arg[1] .. "/scripts/?.lua;" .. arg[1] .. "/test/?.lua;" .. package.path
local json = require("xty.json")
local query = require("query_server")

local sent = 0
local function QueryServer(url, callback, method, body)
    for _, frame in ipairs(json.decode(body).frames or {}) do
        if frame.type == "chat.typing" then sent = sent + 1 end
    end
    query(url, callback, method, body)
end

local ms, next_pump, hints = 0, 0, 0
local Client = require("xty.client")
local client = Client.new({
    url = arg[2], token = arg[3], timezone = "Asia/Shanghai",
    identity = { gameId = "dont-starve-together", saveId = arg[4] },
    adapter = { name = "xty-dst-test", version = "0.1.0" },
    query = QueryServer, now = function() return ms / 1000 end,
    on_frame = function(frame)
        if frame.type == "error" then print("refused " .. tostring(frame.code) .. " " .. tostring(frame.message)) end
    end,
})

local function pump()
    client:pump(0)
    if client.hints ~= hints then
        hints = client.hints
        print("hint at " .. ms .. ": " .. tostring(client.hinted))
    end
end

-- Let `step` ms pass, 10 ms at a time, pumping on the mod's 250 ms beat.
local function idle(step)
    for _ = 1, step / 10 do
        ms = ms + 10
        if ms >= next_pump then
            next_pump = next_pump + 250
            pump()
        end
    end
end

-- UTF-8 characters of text, in order.
local function letters(text)
    local out = {}
    for c in text:gmatch("[%z\1-\127\194-\244][\128-\191]*") do out[#out + 1] = c end
    return out
end

local function keys(step, pieces)
    local draft = ""
    for _, piece in ipairs(pieces) do
        draft = draft .. piece
        client:typing(draft)
        idle(step)
    end
    print("typed " .. draft)
end

client:connect()
for _ = 1, 200 do
    if client.hello then break end
    client:pump(0)
end
if not client.hello then print("no session"); os.exit(1) end
print("session open")
local long = string.rep("阿比盖尔", 15)
keys(20, letters(long))
idle(1000)
print("step burst")
client:typing(long)
idle(1000)
keys(100, letters(long))
idle(1000)
print("step repeats")
keys(400, { "今天", "去矿洞", "之前", "要不要", "带点", "吃的" })
idle(1000)
print("step phrases")
pump()
print("chat.typing frames " .. sent)
