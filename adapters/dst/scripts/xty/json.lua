-- JSON for the XiaoTangYuan DST adapter, in Lua 5.1.
-- encode() writes what DST's own encoder writes: an empty table is {} (Lua cannot tell an
-- empty list from an empty object) and, with dst = true, ' inside a string as \'. The server
-- tolerates both on POST /v1/http only (v1.md "HTTP transport"). Object keys are written sorted,
-- so the output is deterministic. decode() reads the server's answers (strict JSON).
local json = {}

json.null = setmetatable({}, { __tostring = function() return "null" end })

local function is_array(t)
    local n = 0
    for _ in pairs(t) do n = n + 1 end
    if n == 0 then return false end
    for i = 1, n do
        if t[i] == nil then return false end
    end
    return true
end

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }

local function encode_string(s, dst)
    s = s:gsub('[%c"\\]', function(c)
        return escapes[c] or string.format("\\u%04x", c:byte())
    end)
    if dst then s = s:gsub("'", "\\'") end
    return '"' .. s .. '"'
end

local function encode_number(n)
    if n ~= n or n == math.huge or n == -math.huge then error("NaN and Infinity are not JSON") end
    if math.floor(n) == n and math.abs(n) < 1e15 then return string.format("%d", n) end
    local s = string.format("%.15g", n)
    if tonumber(s) ~= n then s = string.format("%.17g", n) end
    return s
end

local function encode(v, dst, out)
    local kind = type(v)
    if v == nil or v == json.null then
        out[#out + 1] = "null"
    elseif kind == "boolean" then
        out[#out + 1] = v and "true" or "false"
    elseif kind == "number" then
        out[#out + 1] = encode_number(v)
    elseif kind == "string" then
        out[#out + 1] = encode_string(v, dst)
    elseif kind == "table" then
        if is_array(v) then
            out[#out + 1] = "["
            for i = 1, #v do
                if i > 1 then out[#out + 1] = "," end
                encode(v[i], dst, out)
            end
            out[#out + 1] = "]"
        else
            local keys = {}
            for k in pairs(v) do keys[#keys + 1] = tostring(k) end
            table.sort(keys)
            out[#out + 1] = "{"
            for i, k in ipairs(keys) do
                if i > 1 then out[#out + 1] = "," end
                out[#out + 1] = encode_string(k, dst)
                out[#out + 1] = ":"
                encode(v[k], dst, out)
            end
            out[#out + 1] = "}"
        end
    else
        error("cannot encode a " .. kind .. " as JSON")
    end
end

-- encode(value, dst): dst = true writes ' as \' (as DST's json.encode does).
function json.encode(v, dst)
    local out = {}
    encode(v, dst, out)
    return table.concat(out)
end

-- The UTF-8 size of the strict compact JSON: what the server measures.
function json.size(v)
    return #json.encode(v, false)
end

local function utf8_char(cp)
    if cp < 0x80 then return string.char(cp) end
    if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
    if cp < 0x10000 then
        return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
    end
    return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
        0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

function json.decode(s)
    local pos = 1
    local function fail(what) error("JSON " .. what .. " at byte " .. pos, 0) end
    local function space() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
    local value
    local function str()
        pos = pos + 1
        local parts = {}
        while true do
            local c = s:sub(pos, pos)
            if c == "" then fail("unterminated string") end
            if c == '"' then pos = pos + 1; return table.concat(parts) end
            if c == "\\" then
                local e = s:sub(pos + 1, pos + 1)
                local simple = ({ b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" })[e]
                if simple then
                    parts[#parts + 1] = simple
                    pos = pos + 2
                elseif e == "u" then
                    local cp = tonumber(s:sub(pos + 2, pos + 5), 16) or fail("bad \\u escape")
                    pos = pos + 6
                    if cp >= 0xD800 and cp < 0xDC00 and s:sub(pos, pos + 1) == "\\u" then
                        local low = tonumber(s:sub(pos + 2, pos + 5), 16)
                        if low and low >= 0xDC00 and low < 0xE000 then
                            cp = 0x10000 + (cp - 0xD800) * 1024 + (low - 0xDC00)
                            pos = pos + 6
                        end
                    end
                    parts[#parts + 1] = utf8_char(cp)
                else
                    fail("bad escape")
                end
            else
                local stop = s:find('["\\]', pos) or #s + 1
                parts[#parts + 1] = s:sub(pos, stop - 1)
                pos = stop
            end
        end
    end
    function value()
        space()
        local c = s:sub(pos, pos)
        if c == "{" then
            pos = pos + 1
            local obj = {}
            space()
            if s:sub(pos, pos) == "}" then pos = pos + 1; return obj end
            while true do
                space()
                if s:sub(pos, pos) ~= '"' then fail("expected a key") end
                local k = str()
                space()
                if s:sub(pos, pos) ~= ":" then fail("expected ':'") end
                pos = pos + 1
                obj[k] = value()
                space()
                local d = s:sub(pos, pos)
                pos = pos + 1
                if d == "}" then return obj end
                if d ~= "," then fail("expected ',' or '}'") end
            end
        elseif c == "[" then
            pos = pos + 1
            local arr = {}
            space()
            if s:sub(pos, pos) == "]" then pos = pos + 1; return arr end
            while true do
                arr[#arr + 1] = value()
                space()
                local d = s:sub(pos, pos)
                pos = pos + 1
                if d == "]" then return arr end
                if d ~= "," then fail("expected ',' or ']'") end
            end
        elseif c == '"' then
            return str()
        elseif s:sub(pos, pos + 3) == "true" then
            pos = pos + 4; return true
        elseif s:sub(pos, pos + 4) == "false" then
            pos = pos + 5; return false
        elseif s:sub(pos, pos + 3) == "null" then
            pos = pos + 4; return json.null
        else
            local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
            if not num or num == "" then fail("unexpected character") end
            pos = pos + #num
            return tonumber(num) or fail("bad number")
        end
    end
    local result = value()
    space()
    if pos <= #s then fail("trailing characters") end
    return result
end

return json
