-- hash_table: an open-addressing hash table built from three parallel arrays (state, keys,
-- values) with linear probing, tombstones and doubling when the load passes 0.6. String keys are
-- hashed character by character (digits via tonumber, letters via an alphabet scan). Counts word
-- occurrences, deletes and re-inserts keys, and prints sizes, probe counts and checksums.
-- Slots are 0-based as in the other twins (arrays indexed with +1).
local floor = math.floor
local ALPHA = "abcdefghijklmnopqrstuvwxyz"
local probes = 0

local function char_code(c)
  if c >= "0" and c <= "9" then return 1 + tonumber(c) end
  for i = 1, 26 do
    if ALPHA:sub(i, i) == c then return 10 + i end
  end
  return 40
end

local function hash(s)
  local h = 5381
  for i = 1, #s do h = (h * 33 + char_code(s:sub(i, i))) % 4294967296 end
  return h
end

local function filled(n, v)
  local t = {}
  for i = 1, n do t[i] = v end
  return t
end

-- t = {size, used, state, keys, vals, cap}
local function new_table(cap) return {0, 0, filled(cap, 0), {}, filled(cap, 0), cap} end

local function slot_of(t, key)
  local state, keys, cap = t[3], t[4], t[6]
  local i = hash(key) % cap
  local tomb = -1
  while true do
    probes = probes + 1
    local st = state[i + 1]
    if st == 0 then
      if tomb >= 0 then return tomb end
      return i
    end
    if st == 2 then
      if tomb < 0 then tomb = i end
    elseif keys[i + 1] == key then
      return i
    end
    i = (i + 1) % cap
  end
end

local put

local function resize(t)
  local old_state, old_keys, old_vals, old_cap = t[3], t[4], t[5], t[6]
  local cap = old_cap * 2
  t[1], t[2], t[3], t[4], t[5], t[6] = 0, 0, filled(cap, 0), {}, filled(cap, 0), cap
  for i = 1, old_cap do
    if old_state[i] == 1 then put(t, old_keys[i], old_vals[i]) end
  end
end

put = function(t, key, val)
  local i = slot_of(t, key) + 1
  if t[3][i] ~= 1 then
    if t[3][i] == 0 then t[2] = t[2] + 1 end
    t[3][i] = 1
    t[4][i] = key
    t[1] = t[1] + 1
  end
  t[5][i] = val
  if t[2] * 10 > t[6] * 6 then resize(t) end
end

local function get(t, key, default)
  local i = slot_of(t, key) + 1
  if t[3][i] == 1 then return t[5][i] end
  return default
end

local function remove(t, key)
  local i = slot_of(t, key) + 1
  if t[3][i] ~= 1 then return false end
  t[3][i] = 2
  t[4][i] = nil
  t[1] = t[1] - 1
  return true
end

local function key_of(k) return "w" .. string.format("%d", k) end

local n = tonumber(arg and arg[1]) or 60000
local third = floor(n / 3)
local t = new_table(16)
local x = 11
for i = 1, n do
  x = x * 48271 % 2147483647
  local key = key_of(x % third)
  put(t, key, get(t, key, 0) + 1)
end
print(string.format("distinct %d capacity %d", t[1], t[6]))
local removed = 0
for k = 0, third - 1, 3 do
  if remove(t, key_of(k)) then removed = removed + 1 end
end
print(string.format("removed %d size %d", removed, t[1]))
local total, hits = 0, 0
for k = 0, third - 1 do
  local v = get(t, key_of(k), -1)
  if v >= 0 then hits = hits + 1; total = total + v * (k % 7 + 1) end
end
for k = 0, third - 1, 6 do put(t, key_of(k), k) end
local check = 0
for i = 1, t[6] do
  if t[3][i] == 1 then check = (check + hash(t[4][i]) % 1000 * t[5][i]) % 1000000007 end
end
print(string.format("hits %d weighted %d size %d capacity %d", hits, total, t[1], t[6]))
print(string.format("probes %d checksum %d", probes, check))
