-- bigint_digits: big-integer arithmetic on little-endian arrays of base-10000 limbs. Computes N!
-- by repeated small multiplication, Fibonacci(4N) by repeated addition, the square of N! by
-- schoolbook multiplication, and compares magnitudes; converts to decimal strings (zero-padded
-- limbs) and prints digit counts, digit sums and the leading and trailing digits.
-- Limb i (0-based in the other twins) is at index i+1.
local floor, min, max = math.floor, math.min, math.max
local BASE = 10000

local function from_int(v)
  local limbs = {}
  while v > 0 do limbs[#limbs + 1] = v % BASE; v = floor(v / BASE) end
  if #limbs == 0 then limbs[1] = 0 end
  return limbs
end

local function mul_small(a, m)
  local out = {}
  local carry = 0
  for i = 1, #a do
    local t = a[i] * m + carry
    out[i] = t % BASE
    carry = floor(t / BASE)
  end
  while carry > 0 do out[#out + 1] = carry % BASE; carry = floor(carry / BASE) end
  return out
end

local function add(a, b)
  local out = {}
  local carry = 0
  local n = max(#a, #b)
  for i = 1, n do
    local t = carry
    if i <= #a then t = t + a[i] end
    if i <= #b then t = t + b[i] end
    if t >= BASE then out[i] = t - BASE; carry = 1 else out[i] = t; carry = 0 end
  end
  if carry > 0 then out[#out + 1] = carry end
  return out
end

local function mul(a, b)
  local out = {}
  local na, nb = #a, #b
  for i = 1, na + nb do out[i] = 0 end
  for i = 1, na do
    local ai = a[i]
    if ai ~= 0 then
      local carry = 0
      for j = 1, nb do
        local t = out[i + j - 1] + ai * b[j] + carry
        out[i + j - 1] = t % BASE
        carry = floor(t / BASE)
      end
      local k = i + nb
      while carry > 0 do
        local t = out[k] + carry
        out[k] = t % BASE
        carry = floor(t / BASE)
        k = k + 1
      end
    end
  end
  while #out > 1 and out[#out] == 0 do out[#out] = nil end
  return out
end

local function compare(a, b)
  if #a ~= #b then
    if #a < #b then return -1 end
    return 1
  end
  for i = #a, 1, -1 do
    if a[i] ~= b[i] then
      if a[i] < b[i] then return -1 end
      return 1
    end
  end
  return 0
end

local function to_string(a)
  local s = string.format("%d", a[#a])
  for i = #a - 1, 1, -1 do
    local part = string.format("%d", a[i])
    while #part < 4 do part = "0" .. part end
    s = s .. part
  end
  return s
end

local function describe(name, a)
  local s = to_string(a)
  local dsum = 0
  for i = 1, #s do dsum = dsum + tonumber(s:sub(i, i)) end
  local head = s:sub(1, min(12, #s))
  local tail = s:sub(max(0, #s - 12) + 1)
  print(string.format("%s digits %d digit sum %d head %s tail %s", name, #s, dsum, head, tail))
end

local n = tonumber(arg and arg[1]) or 2500
local fact = from_int(1)
for k = 2, n do fact = mul_small(fact, k) end
describe("factorial", fact)
local f0, f1 = from_int(0), from_int(1)
for k = 1, 4 * n - 1 do f0, f1 = f1, add(f0, f1) end
describe("fibonacci", f1)
local sq = mul(fact, fact)
describe("factorial squared", sq)
print(string.format("compare fib vs fact %d fact^2 vs fact %d self %d", compare(f1, fact), compare(sq, fact),
  compare(fact, mul_small(fact, 1))))
