-- Test driver: chat over POST /v1/http, answer the server's dialog with yes, print the notice.
--   lua5.1 dialog_driver.lua ADAPTERS_DST_DIR URL TOKEN
package.path = arg[1] .. "/scripts/?.lua;" .. arg[1] .. "/test/?.lua;" .. package.path
local socket = require("socket")
local QueryServer = require("query_server")

local Client = require("xty.client")
local client = Client.new({
    url = arg[2], token = arg[3], timezone = "Asia/Shanghai",
    identity = { gameId = "dont-starve-together", saveId = "world-a" },
    adapter = { name = "xty-dst-test", version = "0.1.0" },
    query = QueryServer, now = socket.gettime,
    on_frame = function(frame) print("frame " .. frame.type) end,
})
local asked, noticed, forgotten = nil, nil, false
require("xty.memory_dialog").attach(client, {
    ask = function(question, request, answer) asked = question; answer(true) end,
    show = function(text, notice) noticed = notice.action .. " " .. notice.target .. ": " .. text end,
})
local old = client.on_frame
client.on_frame = function(frame)
    if frame.type == "memory.forgotten" then forgotten = true end
    old(frame)
end
client:connect()
client:chat("把共同记忆清空", nil, { done = function(frame) print("done " .. frame.text:gsub("\n", " ")) end })
for _ = 1, 240 do  -- each call waits up to 500 ms for frames: up to 2 min under load
    client:pump(500)
    if noticed and forgotten then break end
end
print("question " .. tostring(asked))
print("notice " .. tostring(noticed))
os.exit((asked and noticed and forgotten) and 0 or 1)
