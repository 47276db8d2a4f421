-- Run the DST adapter with plain lua5.1: TheSim:QueryServer's shape, done with a real HTTP
-- request (LuaSocket), then the example mod's logic against a running xtyserver.
--   lua5.1 test/shim.lua run URL TOKEN
--   lua5.1 test/shim.lua play HOST PORT TOKEN CONTROL_FILE STORE_DIR [SEED]
--       scripts/xty/mod.lua in a small DST world: TheSim's persistent strings (files in
--       STORE_DIR) and an asynchronous QueryServer, the world scheduler (DoPeriodicTask, stops
--       while paused) and the static one (DoStaticPeriodicTask, runs on). Lines appended to
--       CONTROL_FILE drive it: "pause", "resume", "chat TEXT", "type TEXT" (the chat box's
--       draft), "talk" and "release"
--       (push-to-talk), "blip SECONDS" (QueryServer fails as with no network), "menu open" /
--       "menu close", "leave" (back to the title screen), "quit" (the game exits, no close).
--       The mod's actions (xty.actions) act on a small inventory and print what they did
--       (POINTED, BUILT, DROPPED).
--   lua5.1 test/shim.lua project OBSERVATION.json "question" game
--   lua5.1 test/shim.lua saveid SALT key=value ...
local here = arg[0]:match("^(.*)/test/[^/]*$") or "."
package.path = here .. "/scripts/?.lua;" .. here .. "/test/?.lua;" .. package.path

local json = require("xty.json")
local mode = arg[1]

if mode == "project" then
    local f = assert(io.open(arg[2], "rb"))
    local observation = json.decode(f:read("*a"))
    f:close()
    print(json.encode(require("xty.projection").project(observation, arg[3], arg[4])))
    os.exit(0)
elseif mode == "saveid" then
    local features = {}
    for i = 3, #arg do
        local k, v = arg[i]:match("^([^=]+)=(.*)$")
        features[k] = v
    end
    print(require("xty.saveid").derive(features, arg[2]))
    os.exit(0)
end

local socket = require("socket")
-- TheSim:QueryServer(url, callback, method, body): callback(result, isSuccessful, resultCode).
local QueryServer = require("query_server")

if mode == "play" then
    os.exit(require("shim_world").play(arg, QueryServer, socket))
end

local code = require("xty.example").run({
    url = arg[2], token = arg[3], salt = "00112233445566778899aabbccddeeff",
    query = QueryServer, now = socket.gettime,
    print = function(line) io.write(line, "\n"); io.flush() end,
})
os.exit(code)
