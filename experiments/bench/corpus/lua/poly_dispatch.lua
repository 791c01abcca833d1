-- poly_dispatch: a loop over a polymorphic array holding integers, floats (never integral: odd
-- tenths), strings and small integer arrays, dispatching on the value's type and accumulating
-- per type (sums, counts, string lengths and comparisons, the arrays' sums), plus a helper whose
-- result type depends on its argument's. Each pass also replaces a few elements with fresh
-- values of random types, so the mix keeps changing. Prints the per-type totals of every pass's
-- last quarter and a checksum.
-- Integers and floats are told apart by math.type under Lua 5.4; LuaJIT has only doubles, where
-- a number is an "integer" when it is integral (the floats here never are).
local floor, max = math.floor, math.max
local mtype = math.type or function(v) if v % 1 == 0 then return "integer" end return "float" end
local seed = 5555

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local words = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"}

local function make_value()
  local k = rand(10)
  if k < 4 then return rand(2001) - 1000 end
  if k < 7 then return (2 * rand(2001) - 2001) / 10.0 end
  if k < 9 then return words[rand(#words) + 1] end
  local l = {}
  for i = 1, 1 + rand(5) do l[i] = rand(100) end
  return l
end

local function weight(v)
  local t = type(v)
  if t == "number" then
    if mtype(v) == "integer" then return v * 2 end
    return v * 0.5
  end
  return #v
end

local function dispatch(vals)
  local ints, floats, strs, lists = 0, 0, 0, 0
  local isum, fsum, slen, early, lsum, check, total = 0, 0.0, 0, 0, 0, 0, 0
  for i = 1, #vals do
    local v = vals[i]
    local t = type(v)
    if t == "number" and mtype(v) == "integer" then
      ints = ints + 1
      isum = isum + v
      check = (check * 31 + v) % 1000000007
    elseif t == "number" then
      floats = floats + 1
      fsum = fsum + v
      if v < 0.0 then fsum = fsum - 0.25 * v end
    elseif t == "string" then
      strs = strs + 1
      slen = slen + #v
      if v < "eta" then early = early + 1 end
      if v:sub(1, 1) == "e" then check = (check * 7 + 1) % 1000000007 end
    else
      lists = lists + 1
      for j = 1, #v do lsum = lsum + v[j] end
      v[1] = (v[1] + 1) % 100
    end
    total = total + weight(v)
  end
  return {ints, floats, strs, lists, isum, fsum, slen, early, lsum, check, total}
end

local n = tonumber(arg and arg[1]) or 400000
local passes = tonumber(arg and arg[2]) or 30
local vals = {}
for i = 1, n do vals[i] = make_value() end
local grand = 0.0
for p = 1, passes do
  local r = dispatch(vals)
  grand = grand + r[6] + r[11]
  if p % max(1, floor(passes / 4)) == 0 then
    print(string.format("pass %d int %d %d float %d %.3f str %d %d %d list %d %d check %d total %.3f",
      p, r[1], r[5], r[2], r[6], r[3], r[7], r[8], r[4], r[9], r[10], r[11]))
  end
  for j = 0, floor(n / 50) - 1 do vals[(p * 7919 + j * 131) % n + 1] = make_value() end
end
print(string.format("grand %.3f", grand))
