-- saveId: HMAC-SHA256 of the save's stable features with a per-install salt, the first 16 bytes
-- in lowercase base32 without padding (26 chars; v1.md "Identity"). The same as
-- xtyserver.adapter.derive_save_id and the C# SaveId.Derive.
local sha = require("xty.sha256")
local M = {}

local ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

-- UTF-8 byte order, which is code point order (v1.md "Identity"). Not table.sort's default:
-- Lua 5.1 compares strings with strcoll, which follows the C locale the game runs in.
function M.before(a, b)
    for i = 1, math.min(#a, #b) do
        local x, y = a:byte(i), b:byte(i)
        if x ~= y then return x < y end
    end
    return #a < #b
end

-- The canonical message: features sorted by key (code point order), each key \31 value \30.
function M.message(features)
    local keys = {}
    for k in pairs(features) do keys[#keys + 1] = k end
    table.sort(keys, M.before)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "\31" .. features[k] .. "\30" end
    return table.concat(parts)
end

-- derive({session = TheNet:GetSessionIdentifier(), world = seed}, salt): never a path, a user
-- name or a Klei/Steam id.
function M.derive(features, salt)
    assert(next(features) ~= nil and salt and salt ~= "", "saveid.derive needs features and a salt")
    local digest = sha.hmac_sha256(salt, M.message(features))
    local out, buffer, bits = {}, 0, 0
    for i = 1, 16 do
        buffer = buffer * 256 + digest:byte(i)
        bits = bits + 8
        while bits >= 5 do
            local index = math.floor(buffer / 2 ^ (bits - 5))
            out[#out + 1] = ALPHABET:sub(index + 1, index + 1)
            buffer = buffer - index * 2 ^ (bits - 5)
            bits = bits - 5
        end
    end
    if bits > 0 then
        local index = buffer * 2 ^ (5 - bits)
        out[#out + 1] = ALPHABET:sub(index + 1, index + 1)
    end
    return table.concat(out)
end

-- A new per-install salt: 32 hex chars from math.random mixed with `entropy` (anything that
-- differs between installs and runs: the real time, a table's address) through SHA-256.
-- Kept by the mod (xty.mod stores it with TheSim:SetPersistentString); never sent.
function M.new_salt(entropy)
    local parts = { tostring(entropy or ""), tostring({}), tostring(os.time()), tostring(os.clock()) }
    for i = 1, 32 do parts[#parts + 1] = string.char(math.random(0, 255)) end
    return sha.hex(sha.sha256(table.concat(parts, "\30"))):sub(1, 32)
end

return M
