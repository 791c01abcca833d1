-- visitor_fn: visitors with function values passed as arguments (no closures are made).
-- Random expression trees ({"num", v}, {"var"}, {"op", k, left, right}) are walked by a generic
-- walk(node, visit, acc) with different visitor functions, rewritten bottom-up by
-- rewrite(node, fn) (constant folding, x*1 and x+0 removal), and evaluated through a table of
-- operator functions; array helpers map/filter/fold take functions too.
local M = 1000003
local function op_add(a, b) return (a + b) % M end
local function op_sub(a, b) return (a - b) % M end
local function op_mul(a, b) return a * b % M end
local OPS = {op_add, op_sub, op_mul}   -- operator k is OPS[k + 1]
local seed = 3

local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function gen(depth)
  if depth == 0 or rand(10) < 3 then
    if rand(3) == 0 then return {"var"} end
    return {"num", rand(4)}
  end
  local k = rand(3)
  local l = gen(depth - 1)
  local r = gen(depth - 1)
  return {"op", k, l, r}
end

local function walk(node, visit, acc)
  visit(node, acc)
  if node[1] == "op" then walk(node[3], visit, acc); walk(node[4], visit, acc) end
end

local function count_kinds(node, acc)
  if node[1] == "num" then acc[1] = acc[1] + 1
  elseif node[1] == "var" then acc[2] = acc[2] + 1
  else acc[3] = acc[3] + 1 end
end

local function sum_consts(node, acc)
  if node[1] == "num" then acc[1] = acc[1] + node[2] end
end

local function rewrite(node, f)
  if node[1] ~= "op" then return f(node) end
  local l = rewrite(node[3], f)
  local r = rewrite(node[4], f)
  return f({"op", node[2], l, r})
end

local function simplify(node)
  if node[1] ~= "op" then return node end
  local l, r, k = node[3], node[4], node[2]
  if l[1] == "num" and r[1] == "num" then return {"num", OPS[k + 1](l[2], r[2])} end
  if k == 2 and r[1] == "num" and r[2] == 1 then return l end
  if k == 2 and l[1] == "num" and l[2] == 1 then return r end
  if k == 0 and r[1] == "num" and r[2] == 0 then return l end
  if k == 0 and l[1] == "num" and l[2] == 0 then return r end
  return node
end

local function identity(node) return node end

local function eval(node, x)
  local kind = node[1]
  if kind == "num" then return node[2] end
  if kind == "var" then return x end
  return OPS[node[2] + 1](eval(node[3], x), eval(node[4], x))
end

local function map(f, xs)
  local out = {}
  for i = 1, #xs do out[i] = f(xs[i]) end
  return out
end

local function filter(pred, xs)
  local out = {}
  for i = 1, #xs do if pred(xs[i]) then out[#out + 1] = xs[i] end end
  return out
end

local function fold(f, init, xs)
  local acc = init
  for i = 1, #xs do acc = f(acc, xs[i]) end
  return acc
end

local function is_odd(v) return v % 2 == 1 end
local function square_mod(v) return v * v % M end

local n = tonumber(arg and arg[1]) or 1500
local kinds, kinds_after, consts = {0, 0, 0}, {0, 0, 0}, {0}
local check = 0
local points = {}
for i = 0, 15 do points[i + 1] = i * 37 + 1 end
for t = 1, n do
  local tree = gen(9)
  walk(tree, count_kinds, kinds)
  walk(tree, sum_consts, consts)
  local simple = rewrite(tree, simplify)
  local same = rewrite(simple, identity)
  walk(same, count_kinds, kinds_after)
  for i = 1, #points do
    local x = points[i]
    local v = eval(tree, x)
    assert(v == eval(simple, x), "simplify changed the value")
    check = (check * 7 + v) % M
  end
end
print(string.format("nodes before [%d, %d, %d] after [%d, %d, %d] constants %d", kinds[1], kinds[2],
  kinds[3], kinds_after[1], kinds_after[2], kinds_after[3], consts[1]))
local values = map(square_mod, points)
print(string.format("squares %d odd %d", fold(op_add, 0, values), #filter(is_odd, values)))
print(string.format("checksum %d", check))
