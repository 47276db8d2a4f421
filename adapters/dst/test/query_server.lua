-- TheSim:QueryServer(url, callback, method, body) for plain lua5.1: a real HTTP request with
-- LuaSocket, answered at once: callback(result, isSuccessful, resultCode).
local http = require("socket.http")
local ltn12 = require("ltn12")
http.TIMEOUT = 40

return function(url, callback, method, body)
    local chunks = {}
    local ok, status = http.request({
        url = url, method = method,
        headers = { ["Content-Type"] = "application/json", ["Content-Length"] = tostring(#body) },
        source = ltn12.source.string(body), sink = ltn12.sink.table(chunks),
    })
    callback(table.concat(chunks), ok ~= nil, ok and status or 0)
end
