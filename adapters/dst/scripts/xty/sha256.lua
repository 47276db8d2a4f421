-- SHA-256 and HMAC-SHA256 in pure Lua 5.1 (no bit library: 32-bit words in doubles, bitwise
-- operations four bits at a time through 16x16 tables). Slow (a few ms per call) but only ever
-- run on a few short messages: the saveId at load time.
local M = {}

local AND, XOR = {}, {}
for a = 0, 15 do
    for b = 0, 15 do
        local r_and, r_xor, p, x, y = 0, 0, 1, a, b
        for _ = 1, 4 do
            local bx, by = x % 2, y % 2
            if bx == 1 and by == 1 then r_and = r_and + p end
            if bx ~= by then r_xor = r_xor + p end
            x, y, p = (x - bx) / 2, (y - by) / 2, p * 2
        end
        AND[a * 16 + b] = r_and
        XOR[a * 16 + b] = r_xor
    end
end

local function op(t, a, b)
    local r, p = 0, 1
    for _ = 1, 8 do
        local x, y = a % 16, b % 16
        r = r + t[x * 16 + y] * p
        a, b, p = (a - x) / 16, (b - y) / 16, p * 16
    end
    return r
end
local function band(a, b) return op(AND, a, b) end
local function bxor(a, b) return op(XOR, a, b) end
local function bnot(a) return 4294967295 - a end
local function shr(a, n) return math.floor(a / 2 ^ n) end
local function rotr(a, n)
    local low = a % 2 ^ n
    return (a - low) / 2 ^ n + low * 2 ^ (32 - n)
end

local K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

local function be32(n)
    return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
end

-- The 32-byte SHA-256 digest of a byte string.
function M.sha256(msg)
    local H = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 }
    local bits = #msg * 8
    msg = msg .. "\128" .. string.rep("\0", (55 - #msg) % 64) .. be32(math.floor(bits / 4294967296)) .. be32(bits % 4294967296)
    for chunk = 1, #msg, 64 do
        local w = {}
        for i = 0, 15 do
            local a, b, c, d = msg:byte(chunk + i * 4, chunk + i * 4 + 3)
            w[i] = ((a * 256 + b) * 256 + c) * 256 + d
        end
        for i = 16, 63 do
            local s0 = bxor(bxor(rotr(w[i - 15], 7), rotr(w[i - 15], 18)), shr(w[i - 15], 3))
            local s1 = bxor(bxor(rotr(w[i - 2], 17), rotr(w[i - 2], 19)), shr(w[i - 2], 10))
            w[i] = (w[i - 16] + s0 + w[i - 7] + s1) % 4294967296
        end
        local a, b, c, d, e, f, g, h = H[1], H[2], H[3], H[4], H[5], H[6], H[7], H[8]
        for i = 0, 63 do
            local S1 = bxor(bxor(rotr(e, 6), rotr(e, 11)), rotr(e, 25))
            local ch = bxor(band(e, f), band(bnot(e), g))
            local t1 = (h + S1 + ch + K[i + 1] + w[i]) % 4294967296
            local S0 = bxor(bxor(rotr(a, 2), rotr(a, 13)), rotr(a, 22))
            local maj = bxor(bxor(band(a, b), band(a, c)), band(b, c))
            local t2 = (S0 + maj) % 4294967296
            h, g, f, e, d, c, b, a = g, f, e, (d + t1) % 4294967296, c, b, a, (t1 + t2) % 4294967296
        end
        H[1], H[2], H[3], H[4] = (H[1] + a) % 4294967296, (H[2] + b) % 4294967296, (H[3] + c) % 4294967296, (H[4] + d) % 4294967296
        H[5], H[6], H[7], H[8] = (H[5] + e) % 4294967296, (H[6] + f) % 4294967296, (H[7] + g) % 4294967296, (H[8] + h) % 4294967296
    end
    local out = {}
    for i = 1, 8 do out[i] = be32(H[i]) end
    return table.concat(out)
end

local function xor_bytes(s, byte)
    return (s:gsub(".", function(c) return string.char(op(XOR, c:byte(), byte)) end))
end

-- HMAC-SHA256 (RFC 2104) of msg with key: 32 bytes.
function M.hmac_sha256(key, msg)
    if #key > 64 then key = M.sha256(key) end
    key = key .. string.rep("\0", 64 - #key)
    return M.sha256(xor_bytes(key, 0x5c) .. M.sha256(xor_bytes(key, 0x36) .. msg))
end

function M.hex(s)
    return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

return M
