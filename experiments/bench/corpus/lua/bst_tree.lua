-- bst_tree: recursive trees as nested tables. Inserts LCG keys into an unbalanced binary search
-- tree of {key, left, right, count} nodes (recursive insert that returns the subtree), walks it
-- recursively for size, height, key sum and leaf count, answers range-count queries, and builds
-- and checks complete "binary-trees" style {left, right} trees of several depths bottom-up.
local floor, max = math.floor, math.max
local seed = 99

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function insert(node, key)
  if node == nil then return {key, nil, nil, 1} end
  if key < node[1] then node[2] = insert(node[2], key)
  elseif key > node[1] then node[3] = insert(node[3], key)
  else node[4] = node[4] + 1 end
  return node
end

local function size(node)
  if node == nil then return 0 end
  return 1 + size(node[2]) + size(node[3])
end

local function height(node)
  if node == nil then return 0 end
  return 1 + max(height(node[2]), height(node[3]))
end

local function key_sum(node)
  if node == nil then return 0 end
  return node[1] * node[4] + key_sum(node[2]) + key_sum(node[3])
end

local function leaves(node)
  if node == nil then return 0 end
  if node[2] == nil and node[3] == nil then return 1 end
  return leaves(node[2]) + leaves(node[3])
end

local function count_range(node, lo, hi)
  if node == nil then return 0 end
  local k = node[1]
  if k < lo then return count_range(node[3], lo, hi) end
  if k > hi then return count_range(node[2], lo, hi) end
  return node[4] + count_range(node[2], lo, hi) + count_range(node[3], lo, hi)
end

local function bottom_up(depth)
  if depth == 0 then return {false, false} end
  return {bottom_up(depth - 1), bottom_up(depth - 1)}
end

local function check(t)
  if not t[1] then return 1 end
  return 1 + check(t[1]) + check(t[2])
end

local n = tonumber(arg and arg[1]) or 60000
local root = nil
for i = 1, n do root = insert(root, rand(n * 4)) end
print(string.format("size %d height %d leaves %d sum %d", size(root), height(root), leaves(root), key_sum(root)))
local q = 0
for i = 1, 200 do
  local lo = rand(n * 4)
  q = q + count_range(root, lo, lo + floor(n / 10))
end
print(string.format("range queries %d", q))

local maxdepth = 4
while (2 ^ (maxdepth + 1)) * 12 < n do maxdepth = maxdepth + 1 end
local long_lived = bottom_up(maxdepth)
local d = 4
while d <= maxdepth do
  local iters = floor(2 ^ (maxdepth - d + 4))
  local total = 0
  for i = 1, iters do total = total + check(bottom_up(d)) end
  print(string.format("depth %d trees %d check %d", d, iters, total))
  d = d + 2
end
print(string.format("long lived depth %d check %d", maxdepth, check(long_lived)))
